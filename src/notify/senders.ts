import { InvalidInputError } from "../core/errors.js";
import type { Send } from "../delivery/options.js";
import { webhookSender } from "../delivery/webhooks.js";
import { discordMessage } from "./discord.js";
import type { Notification } from "./notification.js";
import { postJson } from "./post.js";
import type { NotifySink, SinkNaming } from "./sink.js";
import { slackMessage } from "./slack.js";

/**
 * The delivery `send` of a sink. A webhook sink is the delivery module's own `webhookSender`: the
 * notification is its payload, signed as every tickwork webhook is, and its `webhook-id` is the
 * outbox item's id, stable across retries, so a receiver dedupes on it. Made when the sink is
 * checked, so a secret that is not base64 of at least 16 bytes is refused then, naming the field.
 */
export function senderFor(sink: NotifySink, naming: SinkNaming): Send<Notification> {
  switch (sink.kind) {
    case "webhook":
      try {
        return webhookSender<Notification>({ url: sink.url, secret: sink.secret });
      } catch (error) {
        if (error instanceof InvalidInputError) throw new InvalidInputError(`${naming.at("secret")}: ${error.message}`);
        throw error;
      }
    case "slack":
      return (message, ctx) => postJson(sink.url, slackMessage(message.payload), ctx.signal);
    case "discord":
      return (message, ctx) => postJson(sink.url, discordMessage(message.payload), ctx.signal);
  }
}
