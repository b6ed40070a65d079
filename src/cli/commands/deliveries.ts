import { toMs } from "../../core/duration.js";
import { checkText } from "../../core/bounds.js";
import { MAX_ID_LENGTH, purgeDroppedBefore } from "../../delivery/delivery.js";
import { MAX_NAME_LENGTH } from "../../delivery/options.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, positionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import { EXIT_OK, UsageError, usage } from "../errors.js";
import { print, printJson } from "../output.js";
import { configOf, openSession } from "../session.js";

const COMMON = { ...DATABASE_OPTIONS, ...CONFIG_OPTION, ...JSON_OPTION, ...LOG_LEVEL_OPTION };

export const deliveriesPurgeCommand: Command = {
  name: "deliveries purge",
  summary: "delete a delivery's dead letters for good",
  args: "<delivery> (--id <id> | --older-than <duration> | --all) [options]",
  description: [
    "Deletes dropped items from a delivery's dead-letter table: one by id, those dropped longer ago than a",
    "duration, or all of them. What is purged can no longer be replayed. The engine also deletes dead",
    "letters older than the delivery's deadLetterRetention (default 14 days) on its own. No config is needed.",
  ].join("\n"),
  options: {
    id: { type: "string", value: "<id>", description: "the dropped item to delete" },
    "older-than": { type: "string", value: "<duration>", description: 'those dropped longer ago than this, e.g. "7d", "12h"' },
    all: { type: "boolean", description: "every dropped item of the delivery" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "deliveries purge";
    const [delivery] = positionals(parsed, command, "the delivery whose dead letters to delete", 1);
    usage(command, () => checkText(delivery, "delivery", { max: MAX_NAME_LENGTH }));
    const target = purgeTarget(parsed, command);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "operate" });
    try {
      const store = session.tw.store.delivery;
      const purged =
        "id" in target
          ? await store.purgeDropped({ delivery: delivery!, ids: [target.id], limit: 1 })
          : await purgeDroppedBefore(store, delivery!, session.tw.clock.now() - target.olderThanMs);
      if (flag(parsed, "json")) printJson({ delivery, purged });
      else print(`${purged.length} dead letter${purged.length === 1 ? "" : "s"} of delivery ${delivery} deleted`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

/** Exactly one of --id, --older-than and --all. */
function purgeTarget(parsed: Parsed, command: string): { id: string } | { olderThanMs: number } {
  const id = stringOption(parsed, "id");
  const olderThan = stringOption(parsed, "older-than");
  const all = flag(parsed, "all");
  if ([id !== undefined, olderThan !== undefined, all].filter(Boolean).length !== 1) {
    throw new UsageError("say which dead letters: --id <id>, --older-than <duration> or --all, one of them", command);
  }
  if (id !== undefined) return { id: usage(command, () => checkText(id, "--id", { max: MAX_ID_LENGTH })) };
  if (all) return { olderThanMs: -1 };
  let ms: number;
  try {
    ms = toMs(olderThan!);
  } catch {
    throw new UsageError(`--older-than ${olderThan} is not a duration: use e.g. 12h, 7d`, command);
  }
  return { olderThanMs: ms };
}
