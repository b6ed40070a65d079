/** What the operation `Idempotency.run` calls is given. */
export interface IdempotencyContext {
  /**
   * Aborted, with an `IdempotencyClaimLostError`, as soon as this execution is known to have lost its
   * claim (a renewal or the completion found it taken over): another execution may be running the
   * operation. Pass it to the calls that make side effects, or check it before each one.
   */
  readonly signal: AbortSignal;
}
