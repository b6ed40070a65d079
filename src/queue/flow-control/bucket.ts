/**
 * A rate budget shared by every process, kept as one row of `tickwork_limits` and computed as GCRA
 * (the generic cell rate algorithm, a token bucket kept as one number): tokens come back one every
 * `intervalMs` (`per / max`), and at most `burst` are ever saved up. The row holds `tat`, the instant
 * by which every token taken so far has been paid back; a bucket has `n` tokens at `now` when
 * `tat - now <= (burst - n) * intervalMs`.
 *
 * In any window of length `per` at most `max + burst - 1` tokens are taken: with the default burst of
 * 1, never more than `max`, wherever the window falls (a fixed window lets `2 * max` through around
 * its edge, and a bucket that saves up `max` tokens does too).
 */
export interface BucketSpec {
  /** The row's key: `limiter:<name>`, `queue:<queue>`, `group:<queue>/<group>`. */
  bucket: string;
  intervalMs: number;
  burst: number;
}

export interface BucketState {
  tat: number;
  pausedUntil: number | null;
}

/** Tokens `spec` has at `now` (0 while paused). */
export function tokens(spec: BucketSpec, state: BucketState | undefined, now: number): number {
  if (!state) return spec.burst;
  if (state.pausedUntil !== null && now < state.pausedUntil) return 0;
  const debt = Math.max(0, state.tat - now);
  return Math.max(0, Math.min(spec.burst, Math.floor((spec.burst * spec.intervalMs - debt) / spec.intervalMs + 1e-9)));
}

/** The state after taking `n` tokens at `now` (the caller checked that they were there). */
export function take(spec: BucketSpec, state: BucketState | undefined, now: number, n: number): BucketState {
  return { tat: Math.max(state?.tat ?? now, now) + n * spec.intervalMs, pausedUntil: state?.pausedUntil ?? null };
}

/** When the next token is there (now when one is). */
export function nextTokenAt(spec: BucketSpec, state: BucketState | undefined, now: number): number {
  if (!state) return now;
  const paused = state.pausedUntil !== null && now < state.pausedUntil ? state.pausedUntil : now;
  const refill = Math.ceil(state.tat - (spec.burst - 1) * spec.intervalMs);
  return Math.max(paused, refill, now);
}

/** The bucket of a named limiter (`tw.limiter(name)`); a queue's own is `queue:<queue>`, a group's `group:<queue>/<group>`. */
export function limiterBucket(name: string): string {
  return `limiter:${name}`;
}

export function isLimiterBucket(bucket: string): boolean {
  return bucket.startsWith("limiter:");
}
