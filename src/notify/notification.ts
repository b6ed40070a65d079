import type { LogLevel } from "../core/logger.js";
import type { HeldBack } from "./text.js";

/**
 * One notification, as it waits in a sink's outbox and as a webhook sink POSTs it:
 * `{ event, level, time, text, fields }`, and `held` after a rate-limited spell. `text` is a
 * sentence a person reads in a channel; `fields` are the event's own fields for a program to read.
 */
export interface Notification {
  /** The event's name (`job.failed`), or `notify.held` for a summary of notifications the rate limit held back. */
  event: string;
  level: LogLevel;
  /** When the event was logged, epoch milliseconds on the engine's clock. */
  time: number;
  text: string;
  fields: Record<string, unknown>;
  /**
   * What the sink's rate limit held back since its last notification, by event: present only when
   * something was. The text says it too ("…and 20 more job.failed since ...").
   */
  held?: HeldBack[];
}

/** The name of a notification that only summarises what the rate limit held back. */
export const HELD_EVENT = "notify.held";
