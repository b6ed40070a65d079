import { INT32_MAX } from "../core/bounds.js";
import type { Clock, TimerHandle } from "../core/clock.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { JobFailedError, JobNotFoundError, JobWaitTimeoutError } from "./errors.js";
import type { Job } from "./job.js";
import type { QueueStore } from "./store/store.js";

export interface WaitOptions {
  /** Give up after this long (JobWaitTimeoutError); the job goes on. At most about 24.8 days. Default: no limit. */
  timeout?: Duration;
  /** Called with each progress value the job reports (`ctx.progress`) while it is awaited. */
  onProgress?: (progress: unknown) => void;
  /** Aborting it stops the wait (rejecting with the signal's reason); the job goes on. */
  signal?: AbortSignal;
}

/**
 * Without notifications from the store (SQLite, whose other processes cannot signal this one), a wait
 * reads the job this often; the end of a job run in this process is heard at once.
 */
export const WAIT_POLL_MS = 100;

export interface WaitsDeps {
  store: QueueStore;
  clock: Clock;
  /** The store's signals about awaited jobs from every process, if it has them (see Store.subscribeJobs). */
  subscribe?: (onJob: (id: string) => void) => Promise<() => Promise<void>>;
}

/** A wait's checked options. */
export interface Wait {
  timeoutMs: number | undefined;
  /** When the wait gives up, on the engine's clock. */
  deadline: number | undefined;
  onProgress?: (progress: unknown) => void;
  signal?: AbortSignal;
}

/** One caller awaiting one job. */
interface Waiter {
  id: string;
  onProgress?: (progress: unknown) => void;
  /** The last progress told to the caller, as JSON text, so a value is told once. */
  told: string | undefined;
  /**
   * The attempt whose progress is told from this process, as it reports it: the store's copy of that
   * attempt's progress (written later, and throttled) is not told again.
   */
  localAttempt: number | undefined;
  settle(job: Job | null): void;
  fail(error: unknown): void;
}

/**
 * Checks a wait's options before anything is written (`where` names the call), and starts its
 * clock at `now`: the timeout counts from the call, not from when the wait is registered.
 */
export function checkWait(options: unknown, where: string, now: number): Wait {
  if (options === null || typeof options !== "object") throw new InvalidInputError(`${where}: options must be an object { timeout?, onProgress?, signal? }, got ${describe(options)}`);
  const { timeout, onProgress, signal } = options as WaitOptions;
  let timeoutMs: number | undefined;
  if (timeout !== undefined) {
    try {
      timeoutMs = toMs(timeout);
    } catch {
      throw new InvalidInputError(`${where}: timeout must be a duration (ms, or "30s", "5m"...), got ${describe(timeout)}`);
    }
    if (timeoutMs > INT32_MAX) throw new InvalidInputError(`${where}: timeout must be at most ${INT32_MAX} ms (about 24.8 days), the longest a timer can wait, got ${timeoutMs}`);
  }
  if (onProgress !== undefined && typeof onProgress !== "function") throw new InvalidInputError(`${where}: onProgress must be a function (progress) => void, got ${describe(onProgress)}`);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidInputError(`${where}: signal must be an AbortSignal, got ${describe(signal)}`);
  return { timeoutMs, deadline: timeoutMs === undefined ? undefined : now + timeoutMs, onProgress, signal };
}

/**
 * Callers awaiting jobs' ends (`tw.jobs.wait`, `queue.enqueueAndWait`). A job that ends in this
 * process is heard of at once; in another, by the store's notification where it has them (PostgreSQL's
 * LISTEN, on a connection opened at the first wait), else by reading the job every WAIT_POLL_MS.
 * Every signal is followed by a read of the job, so a signal carries nothing to trust but an id.
 */
export class JobWaits {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private subscription: Promise<(() => Promise<void>) | undefined> | undefined;
  private poll: TimerHandle | undefined;
  /** Jobs being read for their waiters; `again`: a signal came meanwhile, so read once more after. */
  private readonly reading = new Map<string, { again: boolean }>();
  private closed = false;
  /** The subscription is up. */
  private heard = false;

  constructor(private readonly deps: WaitsDeps) {}

  /**
   * Checks a wait's options before anything is written (`where` names the call), and starts its
   * clock: the timeout counts from this call, not from when the wait is registered.
   */
  check(options: unknown, where: string): Wait {
    return checkWait(options, where, this.deps.clock.now());
  }

  /** Whether anyone in this process awaits the job (so its end is worth telling). */
  awaited(id: string): boolean {
    return this.waiters.has(id);
  }

  /** Signals are on their way from other processes, when the store has them: call before writing a job someone will await. */
  async ready(): Promise<void> {
    if (this.listening) return;
    this.subscription ??= this.deps.subscribe!((id) => (id === "*" ? this.readAll() : this.read(id))).then(
      (stop) => {
        this.heard = true;
        return stop;
      },
      (error: unknown) => {
        this.subscription = undefined;
        throw error;
      },
    );
    await this.subscription;
  }

  /** Signals from other processes are heard already (or the store has none): `ready()` has nothing to wait for. */
  get listening(): boolean {
    return !this.deps.subscribe || this.closed || this.heard;
  }

  /**
   * `step` (listening's first round trip, say), unless the wait's signal aborts or its deadline passes
   * first: a wait's timeout and signal hold from its call, also while its store is slow to answer.
   * Then the signal's reason, or `expired()`; `step` goes on unawaited.
   */
  bounded<T>(step: Promise<T>, { deadline, signal }: Pick<Wait, "deadline" | "signal">, expired: () => Error): Promise<T> {
    // The same turns of the event loop with or without a deadline: calls made in an order go on in it.
    const { clock } = this.deps;
    return new Promise<T>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const finish = (settle: () => void) => {
        if (timer) clock.clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        settle();
      };
      const aborted = () => finish(() => reject(signal!.reason));
      if (signal?.aborted) return aborted();
      signal?.addEventListener("abort", aborted, { once: true });
      if (deadline !== undefined) timer = clock.setTimeout(() => finish(() => reject(expired())), Math.max(0, deadline - clock.now()));
      step.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** A job ended (or progressed) in this process, or another said so: its waiters read it. */
  signal(id: string): void {
    if (this.waiters.has(id)) this.read(id);
  }

  /** A progress value reported in this process by `attempt`, told to its waiters here before it is written. */
  progressed(id: string, attempt: number, value: unknown): void {
    const waiters = this.waiters.get(id);
    if (!waiters) return;
    const text = JSON.stringify(value);
    for (const w of waiters) {
      w.localAttempt = attempt;
      if (w.onProgress && w.told !== text) {
        w.told = text;
        w.onProgress(value);
      }
    }
  }

  /**
   * Resolves with the job once it succeeded; rejects with JobFailedError once it failed for good or
   * was cancelled, JobNotFoundError if it does not exist (or was pruned), JobWaitTimeoutError after
   * `timeoutMs`. `marked`: the job was written awaited (enqueueAndWait), so it is read, not marked.
   */
  async wait(id: string, { timeoutMs, deadline, onProgress, signal }: Wait, marked = false): Promise<Job> {
    signal?.throwIfAborted();
    if (!this.listening) await this.bounded(this.ready(), { deadline, signal }, () => new JobWaitTimeoutError(id, timeoutMs!));
    return new Promise<Job>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const done = () => {
        const set = this.waiters.get(id);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(id);
        if (timer) this.deps.clock.clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        if (this.waiters.size === 0) this.stopPolling();
      };
      const waiter: Waiter = {
        id,
        onProgress,
        told: undefined,
        localAttempt: undefined,
        settle: (job) => {
          if (!job) {
            done();
            reject(new JobNotFoundError(id));
          } else if (job.status === "succeeded") {
            done();
            resolve(job);
          } else if (job.status === "failed" || job.status === "cancelled") {
            done();
            reject(new JobFailedError(job));
          } else if (onProgress && job.progress !== null && job.attempts !== waiter.localAttempt) {
            const text = JSON.stringify(job.progress);
            if (text !== waiter.told) {
              waiter.told = text;
              onProgress(job.progress);
            }
          }
        },
        fail: (error) => {
          done();
          reject(error);
        },
      };
      const aborted = () => waiter.fail(signal!.reason);
      signal?.addEventListener("abort", aborted, { once: true });
      if (deadline !== undefined) {
        const timedOut = () => waiter.fail(new JobWaitTimeoutError(id, timeoutMs!));
        // Listening may take a round trip: a deadline passed meanwhile has passed.
        if (deadline <= this.deps.clock.now()) return timedOut();
        timer = this.deps.clock.setTimeout(timedOut, deadline - this.deps.clock.now());
      }
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(waiter);
      // Registered first, then read: an end that lands in between is seen by one or the other.
      const first = marked ? this.deps.store.get({ id }) : this.deps.store.watch({ id });
      first.then((job) => waiter.settle(job), (error: unknown) => waiter.fail(error));
      if (!this.deps.subscribe) this.startPolling();
    });
  }

  /** Stops listening; pending waits reject. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopPolling();
    for (const set of this.waiters.values()) for (const w of set) w.fail(new Error("tickwork: the engine stopped while this job was awaited"));
    const unsubscribe = await this.subscription?.catch(() => undefined);
    this.subscription = undefined;
    await unsubscribe?.();
  }

  private readAll(): void {
    for (const id of this.waiters.keys()) this.read(id);
  }

  /** Reads the job for its waiters; a read already on its way is followed by one more, never more. */
  private read(id: string): void {
    const reading = this.reading.get(id);
    if (reading) {
      reading.again = true;
      return;
    }
    const state = { again: false };
    this.reading.set(id, state);
    void (async () => {
      do {
        state.again = false;
        await this.readOnce(id);
      } while (state.again);
      this.reading.delete(id);
    })();
  }

  private async readOnce(id: string): Promise<void> {
    const waiters = this.waiters.get(id);
    if (!waiters) return;
    try {
      const job = await this.deps.store.get({ id });
      for (const w of [...waiters]) w.settle(job);
    } catch (error) {
      // A failed read is retried by the next signal or poll; a wait is never failed by one.
      void error;
    }
  }

  private startPolling(): void {
    if (this.poll || this.closed) return;
    const tick = () => {
      this.poll = undefined;
      if (this.waiters.size === 0 || this.closed) return;
      this.readAll();
      this.poll = this.deps.clock.setTimeout(tick, WAIT_POLL_MS);
    };
    this.poll = this.deps.clock.setTimeout(tick, WAIT_POLL_MS);
  }

  private stopPolling(): void {
    if (this.poll) this.deps.clock.clearTimeout(this.poll);
    this.poll = undefined;
  }
}
