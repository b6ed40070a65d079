import { InvalidInputError, preview } from "../core/errors.js";
import { senderFor } from "./senders.js";
import type { DiscordSink, DiscordSinkOptions, NotifySink, SinkNaming, SlackSink, SlackSinkOptions, WebhookSink, WebhookSinkOptions } from "./sink.js";

export type { DiscordSink, DiscordSinkOptions, NotifySink, SlackSink, SlackSinkOptions, WebhookSink, WebhookSinkOptions } from "./sink.js";

/** A sink that POSTs `{ event, level, time, text, fields }` as JSON, signed with `secret` (verify it with `verifyWebhook`). */
export function webhookSink(options: WebhookSinkOptions): WebhookSink {
  return fromFactory("webhookSink", "webhook", options) as WebhookSink;
}

/** A sink that posts `{ text }` (Slack mrkdwn) to a Slack incoming webhook. */
export function slackSink(options: SlackSinkOptions): SlackSink {
  return fromFactory("slackSink", "slack", options) as SlackSink;
}

/** A sink that posts `{ content }` (at most 2,000 characters, no mentions) to a Discord webhook. */
export function discordSink(options: DiscordSinkOptions): DiscordSink {
  return fromFactory("discordSink", "discord", options) as DiscordSink;
}

const KEYS: Record<NotifySink["kind"], readonly string[]> = {
  webhook: ["kind", "name", "url", "secret"],
  slack: ["kind", "name", "url"],
  discord: ["kind", "name", "url"],
};

/** Sink names become part of a delivery name, which is stored with every item: short and plain. */
const NAME = /^[A-Za-z0-9_.:-]{1,60}$/;
/** Longer than any webhook URL Slack or Discord hands out, short enough to refuse a pasted document. */
const MAX_URL_LENGTH = 2_000;

function fromFactory(factory: string, kind: NotifySink["kind"], options: unknown): NotifySink {
  if (!options || typeof options !== "object" || Array.isArray(options)) throw new InvalidInputError(`${factory} takes { url${kind === "webhook" ? ", secret" : ""}, name? }, got ${shapeOf(options)}`);
  const naming: SinkNaming = { whole: factory, at: (field) => `${factory}: ${field}` };
  const sink = checkSink({ ...options, kind }, naming);
  // Made and dropped: a secret the sender cannot read is refused here, where the sink is written.
  senderFor(sink, naming);
  return sink;
}

/** What a value is, without its content: a string here may well be a webhook URL or a secret. */
function shapeOf(value: unknown): string {
  if (typeof value === "string") return "a string";
  return value === null || typeof value !== "object" ? preview(value) : Array.isArray(value) ? "an array" : "an object";
}

/**
 * Checks a sink's fields, before anything is registered. Past the `whsec_` prefix, the webhook
 * secret is read by the sender made from it (`webhookSender`), where the delivery module keeps its
 * one reading of secrets.
 */
export function checkSink(value: unknown, { whole, at }: SinkNaming): NotifySink {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidInputError(`${whole} must be a sink from webhookSink(), slackSink() or discordSink(), got ${shapeOf(value)}`);
  }
  const sink = value as Record<string, unknown>;
  const kind = sink["kind"];
  if (kind !== "webhook" && kind !== "slack" && kind !== "discord") {
    throw new InvalidInputError(`${at("kind")} must be "webhook", "slack" or "discord" (make sinks with webhookSink(), slackSink() or discordSink()), got ${preview(kind)}`);
  }
  const unknown = Object.keys(sink).filter((key) => !KEYS[kind].includes(key));
  if (unknown.length) throw new InvalidInputError(`${whole}: a ${kind} sink takes ${KEYS[kind].filter((k) => k !== "kind").join(", ")}; unknown option ${JSON.stringify(unknown[0])}`);
  checkUrl(sink["url"], at("url"));
  if (sink["name"] !== undefined && (typeof sink["name"] !== "string" || !NAME.test(sink["name"]))) {
    throw new InvalidInputError(`${at("name")} must be 1 to 60 letters, digits or "_.:-", got ${preview(sink["name"])}`);
  }
  if (kind === "webhook" && (typeof sink["secret"] !== "string" || !sink["secret"].startsWith("whsec_"))) {
    // The value is not shown: a secret pasted in the wrong format is still a secret.
    throw new InvalidInputError(`${at("secret")} must be "whsec_" + base64 key bytes, got ${typeof sink["secret"] === "string" ? "a string without the whsec_ prefix" : preview(sink["secret"])}`);
  }
  return Object.freeze({ ...sink }) as unknown as NotifySink;
}

function checkUrl(value: unknown, field: string): void {
  // Only the URL's scheme is shown: the rest of a Slack or Discord webhook URL is its credential.
  let shown = preview(value);
  if (typeof value === "string") {
    const parsed = parseUrl(value);
    if (parsed && (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "" && value.length <= MAX_URL_LENGTH) return;
    shown = value.length > MAX_URL_LENGTH ? `a URL of ${value.length} characters (at most ${MAX_URL_LENGTH})` : parsed ? `a URL with the ${parsed.protocol} scheme` : "a string that is not a URL";
  }
  throw new InvalidInputError(`${field} must be an http(s) URL, got ${shown}`);
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
