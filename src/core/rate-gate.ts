/**
 * A budget of calls that outbound code draws from before each call, and pauses when the upstream
 * says the budget is spent (a 429, `x-ratelimit-remaining: 0`). `tw.limiter(...)` is one, shared by
 * every process on the store; the HTTP client takes any (`createHttpClient({ limiter })`).
 */
export interface RateGate {
  readonly name: string;
  /**
   * Resolves once a call may go; rejects with the signal's reason if it aborts first, and at once with
   * an error carrying `retryAt` (epoch ms) when no call may go within `timeout` ms.
   */
  acquire(options?: { signal?: AbortSignal; timeout?: number }): Promise<void>;
  /** No call goes before `until` (epoch ms), for every user of the budget; a later pause wins. */
  pauseUntil(until: number, reason: string): Promise<void>;
}
