import type { Notification } from "./notification.js";
import { cut } from "./text.js";

/** Discord refuses a webhook message whose content is longer. */
export const MAX_DISCORD_CONTENT = 2_000;

/**
 * The body of a Discord webhook post: the event's name in bold above the sentence, markdown in the
 * sentence escaped, and mentions off, so an error text holding `@everyone` pings nobody.
 */
export function discordMessage(n: Notification): { content: string; allowed_mentions: { parse: never[] } } {
  return { content: cut(`**${escape(n.event)}** (${n.level})\n${escape(n.text)}`, MAX_DISCORD_CONTENT), allowed_mentions: { parse: [] } };
}

/** Inline markdown only: every line of a notification starts with a word or "…", never a header or a list. */
function escape(text: string): string {
  return text.replace(/[\\*_~`|[\]]/g, (c) => `\\${c}`);
}
