import * as z from "zod";
import type { Clock } from "../../core/clock.js";
import { toMs, type Duration } from "../../core/duration.js";
import { InvalidInputError, describe, preview } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { durationMs, parseOptions } from "../../core/options.js";
import type { RateGate } from "../../core/rate-gate.js";
import { checkInstant, INT32_MAX } from "../../core/bounds.js";
import { instantOf } from "../../core/time.js";
import { limiterBucket, nextTokenAt, tokens, type BucketSpec } from "./bucket.js";
import { LimiterTimeoutError } from "../errors.js";
import type { QueueStore } from "../store/store.js";

/** Names of limiters, as of queues: they key a row and appear in metrics and URLs. */
export const LIMIT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** `{ max, per, burst? }`: `max` starts per `per` on average, at most `burst` (default 1) at once. */
export const rateFields = z.object({
  max: z.number().int().min(1).max(INT32_MAX),
  per: durationMs.refine((ms) => ms >= 1, "the window must be at least 1 ms"),
  /**
   * Tokens saved up while unused, taken at once by a burst; default 1, which spaces starts evenly
   * and never lets more than `max` through in any window of `per`. A burst `b` allows up to
   * `max + b - 1` in such a window.
   */
  burst: z.number().int().min(1).max(INT32_MAX).optional(),
});

/** A burst is a part of the budget: more would let more than `max` through at once. */
export function burstWithinMax<S extends z.ZodType<{ max: number; burst?: number | undefined }>>(schema: S) {
  return schema.refine((r) => (r.burst ?? 1) <= r.max, { message: "burst must be at most max", path: ["burst"] });
}

export const rateSchema = burstWithinMax(rateFields.strict());

export type RateOptions = z.input<typeof rateSchema>;

/** A parsed rate as a bucket: one token every `per / max`. */
export function bucketOf(bucket: string, rate: z.output<typeof rateSchema>): BucketSpec {
  return { bucket, intervalMs: rate.per / rate.max, burst: rate.burst ?? 1 };
}

export interface LimiterDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
}

export interface LimiterState {
  name: string;
  max: number;
  perMs: number;
  burst: number;
  /** Tokens there now (0 while paused). */
  tokens: number;
  /** Paused by an upstream's rate-limit answer (or by hand) until then; null: not paused. */
  pausedUntil: number | null;
  /** When the next token is there (now when one is). */
  nextTokenAt: number;
}

/**
 * A rate budget shared by every process on the store (`tw.limiter(name, { max, per })`): a task or a
 * handler awaits `acquire()` before each call, an HTTP client takes it as `limiter`, and a queue takes
 * it as `limiter` so that its job starts draw from it. An upstream's "slow down" pauses it for all.
 */
export class Limiter implements RateGate {
  readonly spec: BucketSpec;

  constructor(
    readonly name: string,
    readonly rate: { max: number; perMs: number; burst: number },
    private readonly deps: LimiterDeps,
  ) {
    this.spec = { bucket: limiterBucket(name), intervalMs: rate.perMs / rate.max, burst: rate.burst };
  }

  /** Takes `tokens` (default 1) if they are there now; never waits. */
  async tryAcquire(count = 1): Promise<boolean> {
    this.checkCount(count, "tryAcquire");
    const { granted } = await this.deps.store.takeTokens({ spec: this.spec, n: count, now: this.deps.clock.now() });
    return granted;
  }

  /**
   * Waits for `tokens` (default 1) and takes them. `timeout` bounds the wait: when the next token is
   * further away, it rejects at once with `LimiterTimeoutError` (its `retryAt` says when). `signal`
   * ends the wait with the signal's reason. A token is timed when it is granted; the call it pays for
   * goes a moment later, so under an upstream that counts in fixed windows, keep a small margin.
   */
  async acquire(options: { tokens?: number; signal?: AbortSignal; timeout?: Duration } = {}): Promise<void> {
    const where = `limiter "${this.name}".acquire`;
    if (options === null || typeof options !== "object") throw new InvalidInputError(`${where}: options must be an object, got ${describe(options)}`);
    for (const name of Object.keys(options)) if (!ACQUIRE_KEYS.has(name)) throw new InvalidInputError(`${where}: unknown option "${name}" (expected tokens, signal, timeout)`);
    const count = options.tokens ?? 1;
    this.checkCount(count, "acquire");
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new InvalidInputError(`${where}: signal must be an AbortSignal, got ${describe(options.signal)}`);
    const { clock, store, logger } = this.deps;
    const timeoutMs = options.timeout === undefined ? undefined : acquireTimeout(options.timeout, where);
    const deadline = timeoutMs === undefined ? Infinity : clock.now() + timeoutMs;
    let waited = false;
    for (;;) {
      options.signal?.throwIfAborted();
      const now = clock.now();
      const { granted, retryAt } = await store.takeTokens({ spec: this.spec, n: count, now });
      if (granted) return;
      if (retryAt > deadline) throw new LimiterTimeoutError(this.name, timeoutMs!, retryAt);
      if (!waited) logger.debug("limiter.waiting", { limiter: this.name, until: retryAt });
      waited = true;
      await sleep(clock, Math.max(1, retryAt - now), options.signal);
    }
  }

  /** Pauses the budget for every process until `until`: a Date or epoch ms, or a duration string from now ("90s"). */
  async pause(until: Date | number | string, reason = "paused by hand"): Promise<void> {
    const now = this.deps.clock.now();
    const at = typeof until === "string" ? now + toMs(until) : instantOf(until);
    if (at === null) throw new InvalidInputError(`limiter "${this.name}".pause: expected a Date, epoch ms or a duration, got ${preview(until)}`);
    await this.pauseUntil(checkInstant(at, `limiter "${this.name}".pause: until`), reason);
  }

  async pauseUntil(until: number, reason: string): Promise<void> {
    const now = this.deps.clock.now();
    if (until <= now) return;
    await this.deps.store.pauseBucket({ bucket: this.spec.bucket, until, now });
    this.deps.logger.warn("limiter.paused", { limiter: this.name, until, reason });
  }

  async resume(): Promise<void> {
    await this.deps.store.resumeBucket({ bucket: this.spec.bucket });
    this.deps.logger.info("limiter.resumed", { limiter: this.name });
  }

  async state(): Promise<LimiterState> {
    const now = this.deps.clock.now();
    const state = (await this.deps.store.bucketStates({ buckets: [this.spec.bucket] }))[this.spec.bucket];
    const pausedUntil = state?.pausedUntil != null && state.pausedUntil > now ? state.pausedUntil : null;
    return { name: this.name, max: this.rate.max, perMs: this.rate.perMs, burst: this.rate.burst, tokens: tokens(this.spec, state, now), pausedUntil, nextTokenAt: nextTokenAt(this.spec, state, now) };
  }

  private checkCount(count: unknown, method: string): void {
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > this.rate.burst) {
      throw new InvalidInputError(`limiter "${this.name}".${method}: tokens must be an integer from 1 to the limiter's burst (${this.rate.burst}), got ${describe(count)}`);
    }
  }
}

/** The engine's limiters by name: one per name, and a name means one setting. */
export class Limiters {
  private readonly byName = new Map<string, Limiter>();

  constructor(private readonly deps: LimiterDeps) {}

  define(name: string, options: RateOptions): Limiter {
    if (typeof name !== "string" || !LIMIT_NAME.test(name)) {
      throw new InvalidInputError(`limiter name ${preview(name, 130)} is invalid: use 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);
    }
    const rate = parseOptions(rateSchema, options, `limiter "${name}"`);
    const wanted = { max: rate.max, perMs: rate.per, burst: rate.burst ?? 1 };
    const known = this.byName.get(name);
    if (known) {
      const same = known.rate.max === wanted.max && known.rate.perMs === wanted.perMs && known.rate.burst === wanted.burst;
      if (!same) throw new InvalidInputError(`limiter "${name}" is already defined with ${JSON.stringify(known.rate)}; it cannot also be ${JSON.stringify(wanted)}`);
      return known;
    }
    const limiter = new Limiter(name, wanted, this.deps);
    this.byName.set(name, limiter);
    return limiter;
  }

  get all(): Limiter[] {
    return [...this.byName.values()];
  }
}

function sleep(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const ACQUIRE_KEYS = new Set(["tokens", "signal", "timeout"]);

/** An acquire's timeout in ms: a duration, 0 (a token now or never) up to the longest a timer waits. */
function acquireTimeout(timeout: unknown, where: string): number {
  let ms: number;
  try {
    ms = toMs(timeout as Duration);
  } catch {
    throw new InvalidInputError(`${where}: timeout must be a duration (ms, or "30s", "5m"...), got ${describe(timeout)}`);
  }
  if (ms > INT32_MAX) throw new InvalidInputError(`${where}: timeout must be at most ${INT32_MAX} ms (about 24.8 days), got ${ms}`);
  return ms;
}
