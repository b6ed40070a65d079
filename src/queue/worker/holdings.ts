import type { HeldJob } from "./leases.js";

/**
 * The jobs a worker has in hand: running (started here, its outcome not yet handed to the batcher),
 * prefetched (claimed or handed to it, not started yet) and promised (slots reserved for hand-offs
 * whose insert is still on its way). Every question of capacity (may it take a hand-off, offer a
 * slot, claim more, keep its share of a globalConcurrency) is `free(limit)` or `inHand` here, so the
 * four places that ask count the same things.
 */
export class Holdings {
  private readonly running = new Map<string, HeldJob>();
  /** By job id, in claim order (a Map keeps insertion order): a claim asks, for each job, whether it is held already. */
  private readonly prefetched = new Map<string, HeldJob>();
  private promised = 0;
  private readonly whenEmpty: (() => void)[] = [];

  get runningCount(): number {
    return this.running.size;
  }

  get prefetchedCount(): number {
    return this.prefetched.size;
  }

  /** Running, prefetched and promised. */
  get inHand(): number {
    return this.running.size + this.prefetched.size + this.promised;
  }

  /** How many more jobs fit under `limit` jobs in hand (negative when over it). */
  free(limit: number): number {
    return limit - this.inHand;
  }

  /** The jobs whose leases this worker keeps: running and prefetched. */
  held(): HeldJob[] {
    return [...this.running.values(), ...this.prefetched.values()];
  }

  holds(id: string): boolean {
    return this.running.has(id) || this.prefetched.has(id);
  }

  find(id: string): HeldJob | undefined {
    return this.running.get(id) ?? this.prefetched.get(id);
  }

  runningJobs(): IterableIterator<HeldJob> {
    return this.running.values();
  }

  /** Reserves `count` slots for a hand-off; the function it returns gives them back once (true the first time). */
  promise(count: number): () => boolean {
    this.promised += count;
    let open = true;
    return () => {
      if (!open) return false;
      open = false;
      this.promised -= count;
      return true;
    };
  }

  prefetch(entries: readonly HeldJob[]): void {
    for (const entry of entries) this.prefetched.set(entry.job.id, entry);
  }

  /** A prefetched job that will not start here (its lease was lost, it was cancelled). */
  forget(entry: HeldJob): void {
    if (this.prefetched.get(entry.job.id) === entry) this.prefetched.delete(entry.job.id);
  }

  /** Takes back every prefetched job, or those of `group`, to hand them back to the store. */
  takeBack(group: string | null = null): HeldJob[] {
    const taken: HeldJob[] = [];
    for (const entry of this.prefetched.values()) {
      if (group !== null && entry.job.group !== group) continue;
      taken.push(entry);
      this.prefetched.delete(entry.job.id);
    }
    return taken;
  }

  /**
   * Hands prefetched jobs to `launch` in claim order while fewer than `capacity` run, passing over a
   * job whose group is in `busyGroups` (under groupConcurrency 1: it starts when that one ends).
   * `launch` may decline a job (a lapsed lease) by not calling `started`.
   */
  launchPrefetched(capacity: number, busyGroups: ReadonlySet<string> | null, launch: (entry: HeldJob) => void): void {
    // Deleting the entry being visited is safe: a Map's iteration goes on with the next one.
    for (const entry of this.prefetched.values()) {
      if (this.running.size >= capacity) return;
      if (busyGroups && entry.job.group !== null && busyGroups.has(entry.job.group)) continue;
      this.prefetched.delete(entry.job.id);
      launch(entry);
    }
  }

  started(entry: HeldJob): void {
    this.running.set(entry.job.id, entry);
  }

  ended(entry: HeldJob): void {
    this.running.delete(entry.job.id);
    if (this.running.size === 0) for (const resolve of this.whenEmpty.splice(0)) resolve();
  }

  /** Resolves once nothing runs here. */
  drained(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.whenEmpty.push(resolve));
  }
}
