import type { QueueFlowStatus } from "../../queue/controls.js";
import { checkText } from "../../core/bounds.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, positionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import { EXIT_OK, UsageError, isInputError, usage } from "../errors.js";
import { print, printJson, table, time } from "../output.js";
import { configOf, openSession } from "../session.js";
import { checkQueue } from "./jobs.js";

const COMMON = { ...DATABASE_OPTIONS, ...CONFIG_OPTION, ...JSON_OPTION, ...LOG_LEVEL_OPTION };
/** The engine's bound on a group name. */
const MAX_GROUP_LENGTH = 255;
const GROUP_OPTION = { group: { type: "string" as const, value: "<group>", description: "only this group of the queue (a grouped queue's tenant, symbol...)" } };

/** `queues pause` and `queues resume`: the same command with the other verb. */
function controlCommand(action: "pause" | "resume"): Command {
  const name = `queues ${action}`;
  const done = action === "pause" ? "paused" : "resumed";
  return {
    name,
    summary: action === "pause" ? "stop a queue (or one group of it) from starting jobs, in every process" : "let a paused queue (or group) start jobs again",
    args: "<queue> [--group <group>] [options]",
    description:
      action === "pause"
        ? [
            "Pauses the queue, or one group of it, for every process on the database, until `tickwork queues resume`:",
            "no job of it starts, and jobs already running go on. The pause is kept in the database. The queue must be",
            "declared by the config or have jobs in the database.",
          ].join("\n")
        : ["Ends a pause of the queue, or of one group of it, for every process on the database.", "The queue must be declared by the config or have jobs in the database."].join("\n"),
    options: { ...GROUP_OPTION, ...COMMON },
    async run(parsed) {
      const [queue] = positionals(parsed, name, `the queue to ${action}`, 1);
      const group = groupOption(parsed, name);
      const session = await openSession(parsed, { command: name, config: await configOf(parsed, name, "optional"), purpose: "operate" });
      try {
        checkQueue(session.tw, queue!, name);
        const changed = await controlled(() => session.tw.queues[action](queue!, group === undefined ? {} : { group }), name, session.config === undefined);
        if (flag(parsed, "json")) printJson({ queue, group: group ?? null, changed });
        else {
          const what = group === undefined ? `queue ${queue}` : `group ${group} of queue ${queue}`;
          print(changed ? `${what} ${done} in every process${action === "pause" ? " (jobs already running go on)" : ""}` : `${what} was already ${action === "pause" ? "paused" : "running"}`);
        }
        return EXIT_OK;
      } finally {
        await session.close();
      }
    },
  };
}

export const queuesPauseCommand = controlCommand("pause");
export const queuesResumeCommand = controlCommand("resume");

export const queuesStatusCommand: Command = {
  name: "queues status",
  summary: "queues' flow control: pauses, running jobs against their limits, budgets, busiest groups",
  args: "[queue] [options]",
  description: [
    "Shows each queue's flow control as every process sees it: whether it (or some of its groups) is paused,",
    "its jobs running in every process against its globalConcurrency, its pending jobs, the tokens of the",
    "shared budgets it draws from, and its busiest groups. Limits and groups are those the config declares;",
    "a queue known only from its jobs in the database shows its pauses and counts.",
  ].join("\n"),
  options: {
    groups: { type: "string", value: "<n>", description: "the busiest groups to show per queue, 0 to 1000 (default 20)" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "queues status";
    const [queue] = positionals(parsed, command, "", 0, 1);
    const groupsText = stringOption(parsed, "groups") ?? "20";
    const groups = Number(groupsText);
    if (!/^\d{1,4}$/.test(groupsText) || groups > 1_000) throw new UsageError(`--groups must be an integer from 0 to 1000, got "${groupsText}"`, command);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "inspect" });
    try {
      if (queue !== undefined) checkQueue(session.tw, queue, command);
      const statuses = await session.tw.queues.status(queue, { groups });
      if (flag(parsed, "json")) printJson(statuses);
      else if (statuses.length === 0) print("no queue: the config declares none and the database has no job");
      else printStatuses(statuses);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

/**
 * The engine refuses a group of a queue it does not know as grouped: a command's usage error. A queue
 * known only from its jobs in the database is declared plainly, hence the hint when no config is loaded.
 */
async function controlled<T>(operate: () => Promise<T>, command: string, noConfig: boolean): Promise<T> {
  try {
    return await operate();
  } catch (error) {
    if (!isInputError(error)) throw error;
    const hint = noConfig && / grouped queue/.test(error.message) ? " (no config is loaded: pass --config with the one that declares it)" : "";
    throw new UsageError(`${error.message.replace(/^queues\.(pause|resume): /, "")}${hint}`, command);
  }
}

function groupOption(parsed: Parsed, command: string): string | undefined {
  const group = stringOption(parsed, "group");
  return group === undefined ? undefined : usage(command, () => checkText(group, "--group", { max: MAX_GROUP_LENGTH }));
}

function printStatuses(statuses: QueueFlowStatus[]): void {
  const headers = ["QUEUE", "STATE", "RUNNING", "PENDING", "BUDGETS"];
  const rows = statuses.map((s) => [
    s.name,
    s.paused ? `paused since ${time(s.pausedAt)}` : s.pausedGroups.length ? `${s.pausedGroups.length} group${s.pausedGroups.length === 1 ? "" : "s"} paused` : "active",
    s.globalConcurrency === null ? String(s.running) : `${s.running}/${s.globalConcurrency}`,
    String(s.pending),
    s.buckets.map((b) => `${b.bucket}: ${b.pausedUntil !== null ? `paused until ${time(b.pausedUntil)}` : `${b.tokens}/${b.burst} tokens`}`).join(", ") || "-",
  ]);
  table(headers, rows, ["RUNNING", "PENDING"]).forEach((line) => print(line));
  for (const s of statuses) {
    if (s.pausedGroups.length) print(`  ${s.name}: paused groups: ${s.pausedGroups.join(", ")}`);
    if (s.groups.length) print(`  ${s.name}: busiest groups (pending/running): ${s.groups.map((g) => `${g.group} ${g.pending}/${g.running}`).join(", ")}`);
  }
}
