import type { Logger } from "../core/logger.js";
import type { JobContext } from "./job.js";

/**
 * One attempt's context. Its AbortController is made the first time the handler reads `signal`:
 * creating one costs about as much as running a no-op job, and most handlers never read it. An abort
 * before that is remembered and applied to the controller when it is made.
 */
export class AttemptContext implements JobContext {
  private controller: AbortController | undefined;
  /** Why the attempt was aborted; set once. */
  reason: unknown;
  aborted = false;

  constructor(
    readonly attempt: number,
    readonly logger: Logger,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
