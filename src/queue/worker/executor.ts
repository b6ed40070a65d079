import { nextDelay } from "../../core/backoff.js";
import { MAX_TIME_MS } from "../../core/bounds.js";
import type { Clock } from "../../core/clock.js";
import { InvalidInputError, TickworkError, describe, errorText } from "../../core/errors.js";
import { serialiseJson, utf8Length } from "../../core/json.js";
import type { Logger } from "../../core/logger.js";
import { retryAfterMs } from "../../core/retry-after.js";
import { raceTimeout } from "../../core/timeout.js";
import { SPAN_KIND, failSpan, inSpan, linkFrom, messagingAttributes, type SpanContextLike, type SpanLike, type TraceAttributes, type TracerLike } from "../../core/tracing.js";
import type { AttemptContext } from "./context.js";
import { JobAbortedError, PermanentJobError, ResultTooLargeError, SnoozeError, SnoozeLimitError } from "../errors.js";
import { Snooze, type BatchContext, type BatchHandler, type Job } from "../job.js";
import type { HeldJob } from "./leases.js";
import type { QueueConfig } from "../options.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { ProgressWriter } from "./progress.js";
import { enqueueTraceContext } from "../store/rows.js";
import type { JobOutcome } from "../store/store.js";

export interface ExecutorDeps {
  clock: Clock;
  logger: Logger;
  outcomes: OutcomeBatcher;
  /** Where the attempts' progress goes; its last value is written before the outcome. */
  progress: ProgressWriter;
  /** A retry or snooze was just scheduled for `at`: the worker must not sleep past it. */
  retryScheduled: (at: number) => void;
  /** A job's end was recorded (succeeded, or failed for good): its waiters in this process read it. */
  ended: (id: string) => void;
  /** Each run gets a span linked to its job's enqueue, when the engine traces. */
  tracer?: TracerLike;
}

/**
 * Whether the caller runs inside a job handler of this engine (or of another in the process): its
 * call stack, async frames included, passes through JobExecutor's attempt or attemptBatch, which call
 * the handler and await it. Read from a stack trace, so only where one is asked for (an engine's
 * stop), and only as far as the runtime keeps async frames (V8 does for awaited calls).
 */
export function calledFromJobHandler(): boolean {
  return /\bJobExecutor\.(attempt|attemptBatch)\b/.test(new Error().stack ?? "");
}

/** The code the HTTP client's RateLimitedError carries: an upstream's 429 snoozes the job rather than spending an attempt. */
const RATE_LIMITED = "TW_HTTP_RATE_LIMITED";

/**
 * Runs one queue's jobs, one attempt at a time: the handler within the queue's timeout, the
 * decision a failure leads to (a retry when, or the end), and the outcome recorded and logged.
 */
export class JobExecutor {
  constructor(
    private readonly config: QueueConfig,
    private readonly deps: ExecutorDeps,
  ) {}

  /**
   * Runs one attempt; resolves with how it settles, never rejects. With a tracer, in a `process
   * <queue>` span (the messaging conventions' process, a consumer span) that starts a trace of its
   * own and links to the enqueue that created the job, wherever that ran: the run is started by this
   * worker's loop, not by the code around `start()` or `tick()`, whose context would otherwise parent
   * every run of the process's life.
   */
  run(held: HeldJob): Promise<JobOutcome> {
    const { tracer } = this.deps;
    if (!tracer) return this.attempt(held);
    const { job } = held;
    const attributes: TraceAttributes = { ...messagingAttributes("process", "process", job.queue), "messaging.message.id": job.id, "tickwork.job.attempt": job.attempts };
    if (job.group !== null) attributes["tickwork.job.group"] = job.group;
    return inSpan(tracer, `process ${job.queue}`, { kind: SPAN_KIND.CONSUMER, root: true, attributes, links: links([job]) }, async (span) => {
      const outcome = await this.attempt(held, span);
      span.setAttribute("tickwork.job.outcome", outcomeName(outcome));
      return outcome;
    });
  }

  private async attempt({ job, ctx }: HeldJob, span?: SpanLike): Promise<JobOutcome> {
    const { logger, clock } = this.deps;
    if (logger.enabled("debug")) logger.debug("job.started", { queue: job.queue, id: job.id, attempt: job.attempts, runAt: job.runAt });
    let outcome: JobOutcome;
    try {
      const returned = this.config.handler!(job, ctx);
      const value = await (this.config.timeoutMs === undefined ? returned : this.withTimeout(returned, ctx));
      if (ctx.aborted) throw ctx.reason;
      outcome = value instanceof Snooze ? this.snoozeDecision(job, value.delayMs, clock.now()) : { kind: "succeeded", id: job.id, attempt: job.attempts, result: this.resultText(value) };
    } catch (error) {
      outcome = this.failureDecision(job, error, clock.now());
      // A snooze (asked for, or an upstream's 429) is no failure of the run.
      if (span && outcome.kind === "failed") failSpan(span, error);
    }
    // A flow child's end is counted by its parent in the transaction that records it.
    if (job.parentId !== null && (outcome.kind === "succeeded" || outcome.kind === "failed")) outcome.parent = job.parentId;
    // The handler's last progress value is stored before its outcome, so a waiter that reads the
    // finished job sees it. Most jobs report none, and wait for nothing here.
    const flushing = this.deps.progress.flush(job.id);
    if (flushing) await flushing;
    return outcome;
  }

  /** The handler's return value as JSON text, within the queue's maxResultBytes; undefined for none. */
  private resultText(value: unknown): string | undefined {
    if (value === undefined) return undefined;
    const text = serialiseJson(value, { subject: "the job's result" });
    // A character is at most 3 UTF-8 bytes (a surrogate pair's 4 for its 2), so only text longer
    // than a third of the limit needs counting.
    if (text.length * 3 > this.config.maxResultBytes) {
      const bytes = utf8Length(text);
      if (bytes > this.config.maxResultBytes) throw new ResultTooLargeError(bytes, this.config.maxResultBytes);
    }
    return text;
  }

  /**
   * Runs one attempt of each of `entries`' jobs with one call of the queue's batch handler; resolves
   * with each job's outcome, in order, never rejects. The handler answers per job (see BatchHandler);
   * a throw, a timeout or an answer that is not one entry per job fails every job of the batch.
   */
  runBatch(entries: HeldJob[]): Promise<JobOutcome[]> {
    const { tracer } = this.deps;
    if (!tracer) return this.attemptBatch(entries);
    const jobs = entries.map((e) => e.job);
    const attributes: TraceAttributes = { ...messagingAttributes("process", "process", this.config.name), "messaging.batch.message_count": jobs.length };
    // One span for the handler's one call, linked to every job's enqueue (the conventions' batch process).
    return inSpan(tracer, `process ${this.config.name}`, { kind: SPAN_KIND.CONSUMER, root: true, attributes, links: links(jobs) }, async (span) => {
      const outcomes = await this.attemptBatch(entries);
      const failed = outcomes.filter((o) => o.kind === "failed");
      span.setAttribute("tickwork.batch.failed", failed.length);
      // The first failure's first line: a recorded error carries its stack.
      if (failed.length) failSpan(span, `${failed.length} of ${jobs.length} jobs failed; first: ${(failed[0] as Extract<JobOutcome, { kind: "failed" }>).error.split("\n")[0]}`);
      return outcomes;
    });
  }

  private async attemptBatch(entries: HeldJob[]): Promise<JobOutcome[]> {
    const { logger, clock } = this.deps;
    const jobs = entries.map((e) => e.job);
    if (logger.enabled("debug")) for (const job of jobs) logger.debug("job.started", { queue: job.queue, id: job.id, attempt: job.attempts, runAt: job.runAt });
    const ctx = new BatchAttempt(entries, logger);
    let outcomes: JobOutcome[];
    try {
      const returned = (this.config.handler as unknown as BatchHandler)(jobs, ctx);
      const values = await (this.config.timeoutMs === undefined ? returned : this.batchTimeout(returned, entries));
      if (values !== undefined && (!Array.isArray(values) || values.length !== jobs.length)) {
        throw new InvalidInputError(`the batch handler of queue "${this.config.name}" returned ${describe(values)}: expected nothing, or an array of ${jobs.length} entries (one per job, in order: a result, an Error, or ctx.snooze(...))`);
      }
      const now = clock.now();
      outcomes = entries.map(({ job, ctx: attempt }, i) => {
        const value: unknown = (values as unknown[] | undefined)?.[i];
        if (attempt.aborted) return this.failureDecision(job, attempt.reason, now);
        if (value instanceof Error) return this.failureDecision(job, value, now);
        if (value instanceof Snooze) return this.snoozeDecision(job, value.delayMs, now);
        try {
          return { kind: "succeeded", id: job.id, attempt: job.attempts, result: this.resultText(value) };
        } catch (error) {
          return this.failureDecision(job, error, now);
        }
      });
    } catch (error) {
      const now = clock.now();
      outcomes = jobs.map((job) => this.failureDecision(job, error, now));
    }
    outcomes.forEach((outcome, i) => {
      const parent = jobs[i]!.parentId;
      if (parent !== null && (outcome.kind === "succeeded" || outcome.kind === "failed")) outcome.parent = parent;
    });
    return outcomes;
  }

  /** Records an outcome and logs what it led to; rejects if the store fails. */
  async settle(job: Job, outcome: JobOutcome): Promise<void> {
    const { logger, clock } = this.deps;
    // A write that fails is tried again while the lease lasts (see OutcomeBatcher).
    const accepted = await this.deps.outcomes.add(outcome, job.lease?.until);
    const base = { queue: job.queue, id: job.id, attempt: job.attempts };
    if (!accepted) {
      logger.warn("job.outcome_refused", { ...base, outcome: outcome.kind, reason: "the job is no longer running this attempt (lease lost or cancelled)" });
    } else if (outcome.kind === "succeeded") {
      this.deps.ended(job.id);
      if (logger.enabled("debug")) logger.debug("job.succeeded", { ...base, durationMs: clock.now() - (job.startedAt ?? clock.now()) });
    } else if (outcome.kind === "snoozed") {
      this.deps.retryScheduled(outcome.runAt);
      logger.info("job.snoozed", { ...base, snoozes: job.snoozes + 1, maxSnoozes: this.config.maxSnoozes, runAt: outcome.runAt, delayMs: Math.max(0, outcome.runAt - clock.now()) });
    } else if (outcome.kind === "failed" && outcome.retryAt !== null) {
      this.deps.retryScheduled(outcome.retryAt);
      logger.warn("job.retry_scheduled", { ...base, maxAttempts: job.maxAttempts, retryAt: outcome.retryAt, delayMs: Math.max(0, outcome.retryAt - clock.now()), error: outcome.error });
    } else if (outcome.kind === "failed") {
      this.deps.ended(job.id);
      logger.error("job.failed", { ...base, attempts: job.attempts, maxAttempts: job.maxAttempts, error: outcome.error });
      await runOnFailed(this.config, logger, { ...job, status: "failed", lastError: outcome.error, finishedAt: clock.now() }, outcome.error);
    }
  }

  /**
   * What a failed attempt leads to: a retry at the time the error asks for (`retryAfter`) or the
   * backoff gives, or, after the last attempt or a `PermanentJobError`, the end. Both come from user
   * code, so the time is rounded to a whole millisecond and held to the last one a store can keep
   * (the end of year 9999): a retry asked for later than that is as good as never, but still written.
   */
  private failureDecision(job: Job, error: unknown, now: number): JobOutcome {
    if (error instanceof SnoozeError) return this.snoozeDecision(job, error.delayMs, now);
    if (error instanceof TickworkError && error.code === RATE_LIMITED) {
      return this.snoozeDecision(job, retryAfterMs(error, now) ?? nextDelay(this.config.backoff, job.snoozes + 1) ?? 0, now);
    }
    return this.retryDecision(job, error, now);
  }

  /**
   * Back to pending at now + `delayMs` without spending the attempt, while the job has snoozes left;
   * past the queue's maxSnoozes, a failed attempt (SnoozeLimitError) on the usual retry decision.
   */
  private snoozeDecision(job: Job, delayMs: number, now: number): JobOutcome {
    if (job.snoozes >= this.config.maxSnoozes) return this.retryDecision(job, new SnoozeLimitError(job.snoozes), now);
    return { kind: "snoozed", id: job.id, attempt: job.attempts, runAt: Math.min(Math.round(now + delayMs), MAX_TIME_MS) };
  }

  private retryDecision(job: Job, error: unknown, now: number): JobOutcome {
    let retryAt: number | null = null;
    if (!(error instanceof PermanentJobError) && job.attempts < job.maxAttempts) {
      const delay = retryAfterMs(error, now) ?? nextDelay(this.config.backoff, job.attempts);
      if (delay !== null) retryAt = Math.min(Math.round(now + delay), MAX_TIME_MS);
    }
    return { kind: "failed", id: job.id, attempt: job.attempts, error: errorText(error), retryAt };
  }

  /** A batch fails at the timeout, every job's signal aborted. */
  private batchTimeout(result: unknown, entries: HeldJob[]): Promise<unknown> {
    const ms = this.config.timeoutMs!;
    return raceTimeout(this.deps.clock, ms, result, () => {
      const error = new JobAbortedError("timeout", `batch timed out after ${ms} ms`);
      for (const entry of entries) entry.ctx.abort(error);
      return error;
    });
  }

  /** The attempt fails at the timeout, and its signal is aborted, even if the handler ignores the signal. */
  private withTimeout(result: unknown, ctx: AttemptContext): Promise<unknown> {
    const ms = this.config.timeoutMs!;
    return raceTimeout(this.deps.clock, ms, result, () => {
      const error = new JobAbortedError("timeout", `attempt timed out after ${ms} ms`);
      ctx.abort(error);
      return error;
    });
  }
}

/** Links to the enqueues that created `jobs`, those that were traced. */
function links(jobs: Job[]): { context: SpanContextLike }[] {
  const found: { context: SpanContextLike }[] = [];
  for (const job of jobs) {
    const link = linkFrom(enqueueTraceContext(job));
    if (link) found.push(link);
  }
  return found;
}

/** An outcome as the run's span names it: a failure with a retry to come is a `retry`. */
function outcomeName(outcome: JobOutcome): string {
  return outcome.kind === "failed" && outcome.retryAt !== null ? "retry" : outcome.kind;
}

/** Runs a queue's `onFailed` hook for a job now recorded `failed`; the hook's own failure is logged, never thrown. */
export async function runOnFailed(config: QueueConfig, logger: Logger, job: Job, error: string): Promise<void> {
  if (!config.onFailed) return;
  try {
    await config.onFailed(job, error);
  } catch (hookError) {
    logger.error("job.on_failed_error", { queue: job.queue, id: job.id, error: errorText(hookError) });
  }
}

/** A batch's context: its signal is aborted as soon as any of its jobs' is (made when first read). */
class BatchAttempt implements BatchContext {
  private combined: AbortSignal | undefined;

  constructor(
    private readonly entries: HeldJob[],
    readonly logger: Logger,
  ) {}

  get signal(): AbortSignal {
    this.combined ??= AbortSignal.any(this.entries.map((e) => e.ctx.signal));
    return this.combined;
  }
}
