// tickwork/notify: operators told of what needs a person, on Slack, Discord or a signed webhook,
// through delivery outboxes (`tw.notify`).
export { Notifier, type NotifierStatus, type NotifySinkStatus } from "./notifier.js";
export { webhookSink, slackSink, discordSink, type NotifySink, type WebhookSink, type SlackSink, type DiscordSink, type WebhookSinkOptions, type SlackSinkOptions, type DiscordSinkOptions } from "./sinks.js";
export { DEFAULT_NOTIFY_EVENTS, type NotifyOptions } from "./options.js";
export type { Notification } from "./notification.js";
export type { HeldBack } from "./text.js";
