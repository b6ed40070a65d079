import type { Clock } from "../core/clock.js";
import type { HeldJob } from "./leases.js";
import { setStarted } from "./rows.js";
import type { QueueStore } from "./store.js";

export interface StartMarkDeps {
  store: Pick<QueueStore, "markStarted">;
  clock: Clock;
  workerId: string;
  /** The job's start is written: its handler may run. */
  begin: (entry: HeldJob) => void;
  /** The job will not start here: the worker no longer holds it (`error` undefined) or the write failed. */
  refused: (entry: HeldJob, error?: unknown) => void;
}

/**
 * Writes the starts of jobs a worker held without starting them (prefetched beyond its free slots,
 * or handed over by another process) before their handlers run: an attempt counts from its start,
 * so a job whose worker dies while holding it gets its attempt back. The starts of one turn of the
 * event loop, and those that come while a write is on its way, go in one statement; at most one is
 * on its way at a time.
 */
export class StartMarks {
  private waiting: HeldJob[] = [];
  private sending: Promise<void> | null = null;

  constructor(private readonly deps: StartMarkDeps) {}

  add(entry: HeldJob): void {
    this.waiting.push(entry);
    this.sending ??= this.send();
  }

  /** Resolves once no start is waiting or on its way. */
  settled(): Promise<void> {
    return this.sending ?? Promise.resolve();
  }

  private async send(): Promise<void> {
    // The jobs launched in this turn (a claim's answer, a batch of ends) join the first statement.
    await Promise.resolve();
    while (this.waiting.length) {
      const batch = this.waiting.splice(0);
      const { store, clock, workerId, begin, refused } = this.deps;
      const now = clock.now();
      let marked: Set<string>;
      try {
        marked = new Set(await store.markStarted({ workerId, jobs: batch.map(({ job }) => ({ id: job.id, attempt: job.attempts })), now }));
      } catch (error) {
        for (const entry of batch) refused(entry, error);
        continue;
      }
      for (const entry of batch) {
        if (!marked.has(entry.job.id)) refused(entry);
        else {
          setStarted(entry.job, now);
          begin(entry);
        }
      }
    }
    this.sending = null;
  }
}
