import type { Clock, TimerHandle } from "../core/clock.js";
import { errorText } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { IdempotencyClaimLostError } from "./errors.js";
import type { IdempotencyContext } from "./context.js";
import type { IdempotencyStore, KeyRef } from "./store.js";

/**
 * A claim held while its operation runs: renewed every quarter of `staleAfter` so that it never
 * looks stale to another execution, and the operation's signal, aborted the moment the claim is
 * known to be lost. A renewal that finds the claim gone is such a moment, and it can only happen to
 * an owner that missed renewals for `staleAfter` (frozen, paused, cut off from the store) so that
 * another execution took the key over.
 */
export class HeldClaim {
  readonly context: IdempotencyContext;
  /** Set once the claim is known to be someone else's: nothing this execution writes for it counts. */
  lost = false;
  private readonly controller = new AbortController();
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly deps: { store: IdempotencyStore; clock: Clock; logger: Logger },
    readonly ref: KeyRef,
    readonly id: string,
    private readonly staleMs: number,
  ) {
    this.context = { signal: this.controller.signal };
    this.arm();
  }

  /** The operation has returned or thrown: no more renewals, and a late renewal's answer is ignored. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Records the loss (once): logs it and aborts the operation's signal, then stops renewing. */
  markLost(detectedBy: "renewal" | "completion"): void {
    if (this.lost) return;
    this.lost = true;
    this.stop();
    this.deps.logger.warn("idempotency.claim_lost", { ...this.ref, detectedBy, reason: "another execution took the key over after this one missed its renewals for staleAfter" });
    this.controller.abort(new IdempotencyClaimLostError(this.ref, { status: "unknown" }));
  }

  private arm(): void {
    this.timer = this.deps.clock.setTimeout(() => void this.renew(), this.staleMs / 4);
  }

  private async renew(): Promise<void> {
    this.timer = undefined;
    const { store, clock, logger } = this.deps;
    let held = true;
    try {
      held = await store.renew({ ...this.ref, claimId: this.id, now: clock.now() });
    } catch (error) {
      // Not known to be lost: the next renewal tries again, and the completion is fenced anyway.
      logger.error("store.error", { operation: "idempotency renew", error: errorText(error) });
    }
    if (this.stopped) return;
    if (!held) this.markLost("renewal");
    else this.arm();
  }
}
