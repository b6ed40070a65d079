/**
 * When each job attempt running in this process started, from its `job.started` event, so that every
 * outcome of the attempt gets a duration: only `job.succeeded` carries one of its own.
 */
export class AttemptTimer {
  /** By job id: a job runs at most one attempt at a time in a process, and `job.released` names no attempt. */
  private readonly started = new Map<string, { attempt: number; at: number }>();

  /**
   * `max` bounds the memory if outcomes go missing (a settle that failed against a down store logs no
   * outcome): past it the oldest start is forgotten, and its attempt, if it ever ends, goes untimed.
   */
  constructor(private readonly max = 100_000) {}

  start(id: string, attempt: number, at: number): void {
    this.started.delete(id);
    if (this.started.size >= this.max) {
      const oldest = this.started.keys().next();
      if (!oldest.done) this.started.delete(oldest.value);
    }
    this.started.set(id, { attempt, at });
  }

  /** Milliseconds since the attempt started, forgetting it; undefined if this process did not see it start. */
  end(id: string, attempt: number, at: number): number | undefined {
    const start = this.started.get(id);
    if (start === undefined || start.attempt !== attempt) return undefined;
    this.started.delete(id);
    return Math.max(0, at - start.at);
  }

  /** The job left this process without an outcome of its own (released at shutdown, rescued). */
  forget(id: string): void {
    this.started.delete(id);
  }

  get size(): number {
    return this.started.size;
  }
}
