import type { Backoff } from "../core/backoff.js";
import { INT32_MAX, checkInt } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, preview } from "../core/errors.js";
import type { Send } from "../delivery/options.js";
import type { Notification } from "./notification.js";
import { senderFor } from "./senders.js";
import { checkSink, type NotifySink } from "./sinks.js";

/** What `tw.notify` takes. */
export interface NotifyOptions {
  /** Where notifications go: `webhookSink()`, `slackSink()`, `discordSink()`. Each has its own outbox, retries and rate limit. */
  sinks: readonly NotifySink[];
  /**
   * The events that notify, by name: any event the engine or your code logs through `tw.logger`.
   * Default `job.failed` (a job failed for good), `task.breaker_opened`, `delivery.dropped` and
   * `fanout.retry_scheduled` (a stuck fan-out, see `fanoutStuckAfter`).
   */
  events?: readonly string[];
  /** At most `max` notifications per `per` to each sink; the rest are counted and summarised. Default 10 per minute. */
  rateLimit?: { max: number; per: Duration };
  /**
   * A fan-out notifies as stuck when this many rounds in a row failed: `fanout.retry_scheduled`
   * notifies once per stuck spell, when its `consecutiveFailures` reaches this. Default 3.
   */
  fanoutStuckAfter?: number;
  /** Delay before each retry of a notification its endpoint refused; default the delivery module's 1m 5m 15m 1h 2h. */
  retry?: Backoff;
  /** A post that has not answered after this long fails and is retried; default 10s. */
  timeout?: Duration;
}

/** The events that notify when `events` is not given. */
export const DEFAULT_NOTIFY_EVENTS = ["job.failed", "task.breaker_opened", "delivery.dropped", "fanout.retry_scheduled"] as const;

export interface NotifyConfig {
  sinks: { sink: NotifySink; delivery: string; send: Send<Notification> }[];
  events: ReadonlySet<string>;
  rateLimit: { max: number; per: number };
  fanoutStuckAfter: number;
  retry: Backoff | undefined;
  timeout: number;
}

const KEYS = ["sinks", "events", "rateLimit", "fanoutStuckAfter", "retry", "timeout"];
/** A handful of channels is what anyone pages; more is likely a list built by mistake. */
const MAX_SINKS = 10;
const MAX_EVENTS = 100;
const EVENT_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
const MAX_RATE = 10_000;

/**
 * Checks every option, and builds each sink's sender, before anything is registered: a refused
 * call leaves the engine as it was. `taken(name)` says whether a delivery of that name exists.
 */
export function parseNotifyOptions(options: unknown, taken: (delivery: string) => boolean): NotifyConfig {
  if (!options || typeof options !== "object" || Array.isArray(options)) throw new InvalidInputError(`notify: options must be { sinks, events?, rateLimit? }, got ${preview(options)}`);
  const o = options as Record<string, unknown>;
  const unknown = Object.keys(o).find((key) => !KEYS.includes(key));
  if (unknown !== undefined) throw new InvalidInputError(`notify: unknown option ${JSON.stringify(unknown)} (it takes ${KEYS.join(", ")})`);

  const sinks = o["sinks"];
  if (!Array.isArray(sinks) || sinks.length === 0 || sinks.length > MAX_SINKS) {
    throw new InvalidInputError(`notify: sinks must be an array of 1 to ${MAX_SINKS} sinks (webhookSink(), slackSink(), discordSink()), got ${Array.isArray(sinks) ? `${sinks.length} sinks` : preview(sinks)}`);
  }
  const names = new Set<string>();
  const parsed = sinks.map((value: unknown, i) => {
    const naming = { whole: `notify: sinks[${i}]`, at: (field: string) => `notify: sinks[${i}].${field}` };
    const sink = checkSink(value, naming);
    const delivery = deliveryName(sink, names, taken, naming.at("name"));
    names.add(delivery);
    return { sink, delivery, send: senderFor(sink, naming) };
  });

  return {
    sinks: parsed,
    events: parseEvents(o["events"]),
    rateLimit: parseRateLimit(o["rateLimit"]),
    fanoutStuckAfter: o["fanoutStuckAfter"] === undefined ? 3 : checkInt(o["fanoutStuckAfter"], "notify: fanoutStuckAfter", { min: 1, max: 1_000 }),
    retry: parseRetry(o["retry"]),
    timeout: o["timeout"] === undefined ? 10_000 : duration(o["timeout"], "notify: timeout", 1, INT32_MAX),
  };
}

/**
 * The sink's outbox: `notify:<name>`, or `notify:<kind>` numbered past the ones already declared.
 * A name someone already holds is refused rather than shared: two sinks on one outbox would each
 * send the other's notifications.
 */
function deliveryName(sink: NotifySink, mine: ReadonlySet<string>, taken: (delivery: string) => boolean, field: string): string {
  const used = (name: string) => mine.has(name) || taken(name);
  if (sink.name !== undefined) {
    const name = `notify:${sink.name}`;
    if (used(name)) throw new InvalidInputError(`${field} ${JSON.stringify(sink.name)} is taken: a delivery named ${JSON.stringify(name)} is already declared; give each sink its own name`);
    return name;
  }
  let name = `notify:${sink.kind}`;
  for (let n = 2; used(name); n++) name = `notify:${sink.kind}:${n}`;
  return name;
}

function parseEvents(value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set(DEFAULT_NOTIFY_EVENTS);
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_EVENTS) {
    throw new InvalidInputError(`notify: events must be an array of 1 to ${MAX_EVENTS} event names such as "job.failed", got ${preview(value)}`);
  }
  value.forEach((name: unknown, i) => {
    if (typeof name !== "string" || name.length > 100 || !EVENT_NAME.test(name)) throw new InvalidInputError(`notify: events[${i}] must be an event name such as "job.failed", got ${preview(name)}`);
  });
  return new Set(value as string[]);
}

function parseRateLimit(value: unknown): { max: number; per: number } {
  if (value === undefined) return { max: 10, per: 60_000 };
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new InvalidInputError(`notify: rateLimit must be { max, per }, such as { max: 10, per: "1m" }, got ${preview(value)}`);
  const r = value as Record<string, unknown>;
  const unknown = Object.keys(r).find((key) => key !== "max" && key !== "per");
  if (unknown !== undefined) throw new InvalidInputError(`notify: rateLimit: unknown option ${JSON.stringify(unknown)} (it takes max, per)`);
  return { max: checkInt(r["max"], "notify: rateLimit.max", { min: 1, max: MAX_RATE }), per: duration(r["per"], "notify: rateLimit.per", 1, 86_400_000) };
}

function parseRetry(value: unknown): Backoff | undefined {
  if (value === undefined || typeof value === "function") return value as Backoff | undefined;
  throw new InvalidInputError(`notify: retry must be a backoff: schedule([...]), exponential({...}) or (attempt) => ms | null, got ${preview(value)}`);
}

function duration(value: unknown, field: string, min: number, max: number): number {
  let ms: number;
  try {
    ms = toMs(value as Duration);
  } catch (error) {
    throw new InvalidInputError(`${field}: ${(error as Error).message}`);
  }
  if (ms < min || ms > max) throw new InvalidInputError(`${field} must be from ${min} ms to ${max} ms, got ${preview(value)}`);
  return ms;
}
