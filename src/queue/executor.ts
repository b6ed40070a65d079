import { nextDelay } from "../core/backoff.js";
import { MAX_TIME_MS } from "../core/bounds.js";
import type { Clock } from "../core/clock.js";
import { errorText } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { retryAfterMs } from "../core/retry-after.js";
import { raceTimeout } from "../core/timeout.js";
import type { AttemptContext } from "./context.js";
import { JobAbortedError, PermanentJobError } from "./errors.js";
import type { Job } from "./job.js";
import type { HeldJob } from "./leases.js";
import type { QueueConfig } from "./options.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { JobOutcome } from "./store.js";

export interface ExecutorDeps {
  clock: Clock;
  logger: Logger;
  outcomes: OutcomeBatcher;
  /** A retry was just scheduled for `at`: the worker must not sleep past it. */
  retryScheduled: (at: number) => void;
}

/**
 * Runs one queue's jobs, one attempt at a time: the handler within the queue's timeout, the
 * decision a failure leads to (a retry when, or the end), and the outcome recorded and logged.
 */
export class JobExecutor {
  constructor(
    private readonly config: QueueConfig,
    private readonly deps: ExecutorDeps,
  ) {}

  /** Runs one attempt; resolves with how it settles, never rejects. */
  async run({ job, ctx }: HeldJob): Promise<JobOutcome> {
    const { logger, clock } = this.deps;
    if (logger.enabled("debug")) logger.debug("job.started", { queue: job.queue, id: job.id, attempt: job.attempts });
    try {
      const result = this.config.handler!(job, ctx);
      await (this.config.timeoutMs === undefined ? result : this.withTimeout(result, ctx));
      if (ctx.aborted) throw ctx.reason;
      return { kind: "succeeded", id: job.id, attempt: job.attempts };
    } catch (error) {
      return this.retryDecision(job, error, clock.now());
    }
  }

  /** Records an outcome and logs what it led to; rejects if the store fails. */
  async settle(job: Job, outcome: JobOutcome): Promise<void> {
    const { logger, clock } = this.deps;
    const accepted = await this.deps.outcomes.add(outcome);
    const base = { queue: job.queue, id: job.id, attempt: job.attempts };
    if (!accepted) {
      logger.warn("job.outcome_refused", { ...base, outcome: outcome.kind, reason: "the job is no longer running this attempt (lease lost or cancelled)" });
    } else if (outcome.kind === "succeeded") {
      if (logger.enabled("debug")) logger.debug("job.succeeded", { ...base, durationMs: clock.now() - (job.startedAt ?? clock.now()) });
    } else if (outcome.kind === "failed" && outcome.retryAt !== null) {
      this.deps.retryScheduled(outcome.retryAt);
      logger.warn("job.retry_scheduled", { ...base, maxAttempts: job.maxAttempts, retryAt: outcome.retryAt, delayMs: Math.max(0, outcome.retryAt - clock.now()), error: outcome.error });
    } else if (outcome.kind === "failed") {
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
  private retryDecision(job: Job, error: unknown, now: number): JobOutcome {
    let retryAt: number | null = null;
    if (!(error instanceof PermanentJobError) && job.attempts < job.maxAttempts) {
      const delay = retryAfterMs(error, now) ?? nextDelay(this.config.backoff, job.attempts);
      if (delay !== null) retryAt = Math.min(Math.round(now + delay), MAX_TIME_MS);
    }
    return { kind: "failed", id: job.id, attempt: job.attempts, error: errorText(error), retryAt };
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

/** Runs a queue's `onFailed` hook for a job now recorded `failed`; the hook's own failure is logged, never thrown. */
export async function runOnFailed(config: QueueConfig, logger: Logger, job: Job, error: string): Promise<void> {
  if (!config.onFailed) return;
  try {
    await config.onFailed(job, error);
  } catch (hookError) {
    logger.error("job.on_failed_error", { queue: job.queue, id: job.id, error: errorText(hookError) });
  }
}
