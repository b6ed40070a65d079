import type { LogEvent, LogLevel } from "../core/logger.js";

/** What the rate limit held back of one event name: how many, and since when. */
export interface HeldBack {
  event: string;
  /** The level the event was logged at. */
  level: LogLevel;
  count: number;
  /** When the first of them was held back, epoch ms. */
  since: number;
}

type Fields = Record<string, unknown>;

/**
 * A sentence per event an operator is notified of, from the event's own fields; any other event
 * gets its name and fields. Errors show their first line: the stack stays in `fields`.
 */
const SENTENCES: Record<string, (f: Fields) => string> = {
  "job.failed": (f) => `Job ${show(f["id"])} in queue "${show(f["queue"])}" failed for good after ${show(f["attempts"])} of ${show(f["maxAttempts"])} attempts: ${firstLine(f["error"])}`,
  "task.breaker_opened": (f) => `Task "${show(f["task"])}" failed ${show(f["consecutiveFailures"])} times in a row and its breaker opened: ${show(f["action"])}.`,
  "delivery.dropped": (f) =>
    `Delivery "${show(f["delivery"])}" dropped item ${show(f["id"])}${f["key"] ? ` (key ${show(f["key"])})` : ""} after ${show(f["attempts"])} attempts, ${show(f["reason"])}: ${firstLine(f["error"])}. It is in the dead-letter table; replay it with replay({ id }).`,
  "fanout.retry_scheduled": (f) =>
    `Fan-out "${show(f["fanout"])}" is stuck: ${show(f["consecutiveFailures"])} rounds in a row failed to bring every target to version ${show(f["version"])}. ${firstLine(f["error"])}. Next retry at ${time(f["retryAt"])}.`,
};

/** The plain text of an event (sinks add their own markup). */
export function eventText(event: LogEvent): string {
  const { event: name, level: _level, time: _time, ...fields } = event;
  const sentence = SENTENCES[name];
  if (sentence) return sentence(fields);
  const parts = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === "string" ? firstLine(value) : show(value)}`);
  return parts.length ? `${name}: ${parts.join(", ")}` : name;
}

/** "and 20 more job.failed since 2026-01-01T00:00:00.000Z", for each event the rate limit held back. */
export function heldText(held: readonly HeldBack[], limit: { max: number; per: number }): string {
  const counts = held.map((h) => `and ${h.count} more ${h.event} since ${new Date(h.since).toISOString()}`).join(", ");
  return `…${counts} (held back by the rate limit of ${limit.max} per ${durationText(limit.per)})`;
}

/** A duration as a person reads it: "1m", "30s", "1h30m", "250 ms". */
export function durationText(ms: number): string {
  if (ms % 1_000 !== 0) return `${ms} ms`;
  const units: [string, number][] = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000]];
  let rest = ms;
  let text = "";
  for (const [unit, size] of units) {
    if (rest >= size) {
      text += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return text || "0s";
}

function show(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "?";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function firstLine(value: unknown): string {
  return show(value).split("\n", 1)[0]!.trim();
}

function time(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) ? new Date(value).toISOString() : show(value);
}

/** At most `max` UTF-16 units, the cut marked with "…" and never inside a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
