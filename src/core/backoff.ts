import { toMs, type Duration } from "./duration.js";
import { InvalidInputError, describe } from "./errors.js";

/**
 * A backoff policy maps the number of failed attempts so far (1 after the first failure) to the
 * delay before the next attempt in milliseconds, or `null` to stop retrying.
 */
export type BackoffPolicy = (failures: number) => number | null;

/** What every `backoff` option accepts: a policy built here or a plain function. */
export type Backoff = BackoffPolicy;

export type Jitter = "none" | "full" | "equal";

export interface ExponentialOptions {
  /** Delay after the first failure. */
  base: Duration;
  /** Growth per failure; default 2. */
  factor?: number;
  /** Ceiling of the delay (before jitter); default 1 day, so long retry chains neither overflow nor stop. */
  max?: Duration;
  /**
   * `full`: uniform in [0, delay]; `equal`: delay/2 plus uniform in [0, delay/2]; `none` (default).
   * Jitter spreads retries of jobs that failed together (AWS's "Exponential Backoff And Jitter").
   */
  jitter?: Jitter;
  /** Source of randomness in [0, 1); injectable so tests can pin jitter. */
  random?: () => number;
}

const DAY_MS = 86_400_000;

/** `base * factor^(failures-1)`, capped at `max`, with optional jitter. Never ends retries by itself. */
export function exponential(options: ExponentialOptions): BackoffPolicy {
  const base = toMs(options.base);
  const factor = options.factor ?? 2;
  if (!Number.isFinite(factor) || factor < 1) {
    throw new InvalidInputError(`exponential backoff: factor must be a number >= 1, got ${describe(options.factor)}`);
  }
  const max = options.max === undefined ? DAY_MS : toMs(options.max);
  const jitter = options.jitter ?? "none";
  if (jitter !== "none" && jitter !== "full" && jitter !== "equal") {
    throw new InvalidInputError(`exponential backoff: jitter must be "none", "full" or "equal", got ${describe(jitter)}`);
  }
  const random = options.random ?? Math.random;
  return (failures) => {
    const delay = Math.min(max, base * factor ** Math.max(0, failures - 1));
    if (jitter === "full") return Math.round(random() * delay);
    if (jitter === "equal") return Math.round(delay / 2 + (random() * delay) / 2);
    return delay;
  };
}

/**
 * Fixed steps: the delay after failure n is `steps[n-1]`; after the last step there is no retry.
 * `schedule(["1m", "5m"])` retries after 1 minute, then after 5 minutes, then gives up.
 */
export function schedule(steps: readonly Duration[]): BackoffPolicy {
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new InvalidInputError(`schedule(): expected a non-empty array of durations, got ${describe(steps)}`);
  }
  const delays = steps.map(toMs);
  return (failures) => (failures >= 1 && failures <= delays.length ? delays[failures - 1]! : null);
}

/** Applies a policy, treating a non-finite or negative answer from a user function as "stop". */
export function nextDelay(policy: BackoffPolicy, failures: number): number | null {
  const delay = policy(failures);
  return typeof delay === "number" && Number.isFinite(delay) && delay >= 0 ? delay : null;
}
