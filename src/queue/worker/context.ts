import { toMs, type Duration } from "../../core/duration.js";
import type { Logger } from "../../core/logger.js";
import { Snooze, type ChildResult, type Job, type JobContext } from "../job.js";

/** What an attempt's context reaches beyond itself: where progress goes, the store for a parent's children. */
export interface AttemptServices {
  report(job: Job, value: unknown): void;
  childResults(job: Job): Promise<ChildResult[]>;
}

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
    private readonly job: Job,
    readonly logger: Logger,
    private readonly services: AttemptServices,
  ) {}

  get attempt(): number {
    return this.job.attempts;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  progress(value: unknown): void {
    this.services.report(this.job, value);
  }

  childResults(): Promise<ChildResult[]> {
    return this.services.childResults(this.job);
  }

  snooze(delay: Duration): Snooze {
    return new Snooze(toMs(delay));
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
