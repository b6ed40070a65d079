/**
 * The shapes of notification sinks, apart from the factories that check them (sinks.ts) and the
 * senders that post to them (senders.ts), which both read them.
 */

/** Where notifications go: a signed JSON webhook, a Slack incoming webhook, or a Discord webhook. */
export type NotifySink = WebhookSink | SlackSink | DiscordSink;

interface SinkBase {
  /**
   * Names the sink's outbox, a delivery called `notify:<name>` (default `notify:<kind>`, then
   * `notify:<kind>:2`...): notifications still waiting there after a restart go to the sink that
   * bears the name then.
   */
  readonly name?: string;
  /** The endpoint notifications are POSTed to. A Slack or Discord webhook URL is a credential: it never appears in errors or events. */
  readonly url: string;
}

export interface WebhookSink extends SinkBase {
  readonly kind: "webhook";
  /** `whsec_` + base64 key bytes: requests are signed as the delivery module's `webhookSender` signs them (Standard Webhooks). */
  readonly secret: string;
}

export interface SlackSink extends SinkBase {
  readonly kind: "slack";
}

export interface DiscordSink extends SinkBase {
  readonly kind: "discord";
}

export type WebhookSinkOptions = Omit<WebhookSink, "kind">;
export type SlackSinkOptions = Omit<SlackSink, "kind">;
export type DiscordSinkOptions = Omit<DiscordSink, "kind">;

/** How errors name a sink (`notify: sinks[0]`) and its fields (`notify: sinks[0].url`). */
export interface SinkNaming {
  whole: string;
  at(field: string): string;
}
