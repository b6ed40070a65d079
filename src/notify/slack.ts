import type { LogLevel } from "../core/logger.js";
import type { Notification } from "./notification.js";
import { cut } from "./text.js";

/** Slack shows at most this much of a message's text without folding it; longer text is cut. */
const MAX_TEXT = 4_000;

const EMOJI: Record<LogLevel, string> = { critical: ":rotating_light:", error: ":x:", warn: ":warning:", info: ":information_source:", debug: ":mag:" };

/** The body of a Slack incoming-webhook post: `text` in mrkdwn, the event's name in bold above the sentence. */
export function slackMessage(n: Notification): { text: string } {
  return { text: cut(`${EMOJI[n.level] ?? ""} *${escape(n.event)}*\n${escape(n.text)}`, MAX_TEXT) };
}

/** Slack reads `&`, `<` and `>` as markup (links, mentions): a job's error must not ping a channel. */
function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
