import { TickworkError } from "../core/errors.js";

/** A webhook request whose signature, timestamp or headers do not check out (`TW_WEBHOOK_INVALID`). */
export class WebhookVerificationError extends TickworkError {
  constructor(message: string) {
    super("TW_WEBHOOK_INVALID", message);
  }
}

/** The webhook receiver answered with a status other than 2xx (`TW_WEBHOOK_STATUS`); the item is retried. */
export class WebhookResponseError extends TickworkError {
  constructor(readonly status: number, url: string) {
    super("TW_WEBHOOK_STATUS", `webhook receiver ${url} answered ${status}`);
  }
}
