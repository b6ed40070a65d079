import { readFileSync } from "node:fs";
import { HELP_OPTION, flag, parse, renderHelp } from "./args.js";
import type { Command } from "./command.js";
import { deliveriesPurgeCommand } from "./commands/deliveries.js";
import { jobsCancelCommand, jobsListCommand, jobsRetryCommand } from "./commands/jobs.js";
import { migrateCommand } from "./commands/migrate.js";
import { queuesPauseCommand, queuesResumeCommand, queuesStatusCommand } from "./commands/queues.js";
import { startCommand } from "./commands/start.js";
import { statusCommand } from "./commands/status.js";
import { tasksListCommand, tasksPauseCommand, tasksResumeCommand, tasksRunCommand } from "./commands/tasks.js";
import { topCommand } from "./commands/top.js";
import { EXIT_OK, EXIT_USAGE, UsageError, exitCodeOf, messageOf } from "./errors.js";
import { note, print } from "./output.js";

const COMMANDS: Command[] = [
  startCommand,
  migrateCommand,
  statusCommand,
  topCommand,
  jobsListCommand,
  jobsRetryCommand,
  jobsCancelCommand,
  queuesPauseCommand,
  queuesResumeCommand,
  queuesStatusCommand,
  tasksListCommand,
  tasksRunCommand,
  tasksPauseCommand,
  tasksResumeCommand,
  deliveriesPurgeCommand,
];
const GROUPS: Record<string, string> = {
  jobs: "look at jobs, retry or cancel them",
  queues: "pause and resume queues (or groups of them) in every process, and see their flow control",
  tasks: "list, run, pause and resume periodic tasks",
  deliveries: "delete a delivery's dead letters",
};
/** The subcommand a group runs when none is named: `tickwork tasks` lists the tasks. */
const GROUP_DEFAULTS: Record<string, string> = { tasks: "list" };

/** Runs one command line and returns the exit code; every error becomes one line on stderr. */
export async function runCli(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (error) {
    const hint = error instanceof UsageError ? ` (see: tickwork ${error.command ? `${error.command} ` : ""}--help)` : "";
    note(`tickwork${error instanceof UsageError && error.command ? ` ${error.command}` : ""}: ${messageOf(error)}${hint}`);
    return exitCodeOf(error);
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [first, second] = argv;
  if (first === undefined) {
    note(mainHelp());
    return EXIT_USAGE;
  }
  if (first === "--help" || first === "-h" || first === "help") return printed(mainHelp());
  if (first === "--version" || first === "-v") return printed(version());
  if (first.startsWith("-")) throw new UsageError(`the command comes first: tickwork <command> [options], got ${first}`);
  let name = first;
  let rest = argv.slice(1);
  if (first in GROUPS) {
    if (second === "--help" || second === "-h") return printed(groupHelp(first));
    const fallback = GROUP_DEFAULTS[first];
    if ((second === undefined || second.startsWith("-")) && fallback !== undefined) {
      name = `${first} ${fallback}`;
    } else {
      if (second === undefined || second.startsWith("-")) throw new UsageError(`missing the subcommand: ${subcommands(first).join(", ")}`, first);
      name = `${first} ${second}`;
      rest = argv.slice(2);
    }
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command && first in GROUPS) throw new UsageError(`unknown subcommand "${second}" (${first} has ${subcommands(first).join(", ")})`, first);
  if (!command) throw new UsageError(`unknown command "${name}" (commands: ${[...new Set(COMMANDS.map((c) => c.name.split(" ")[0]))].join(", ")})`);
  const options = { ...command.options, ...HELP_OPTION };
  const parsed = parse(command.name, rest, options);
  if (flag(parsed, "help")) return printed(renderHelp(`tickwork ${command.name} ${command.args}`, command.description, options));
  return command.run(parsed);
}

function printed(text: string): number {
  print(text);
  return EXIT_OK;
}

function subcommands(group: string): string[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name.slice(group.length + 1));
}

function commandList(commands: Command[]): string[] {
  const width = Math.max(...commands.map((c) => c.name.length));
  return commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
}

function mainHelp(): string {
  return [
    "tickwork: durable background work (job queues, periodic tasks) on SQLite or PostgreSQL",
    "",
    "Usage: tickwork <command> [options]",
    "",
    "Commands:",
    ...commandList(COMMANDS),
    "",
    "Every command takes --db <file|url> (default: $TICKWORK_DB, else ./tickwork.db) and --help.",
    "The config file (--config, $TICKWORK_CONFIG, else ./tickwork.config.{ts,mts,js,mjs}) is a module whose",
    "default export is defineConfig({ queues, tasks, engine, setup }) or a function (tw, context) => teardown?.",
    "Exit codes: 0 done; 1 a failure at run time; 2 a usage error or a bad config file.",
    "",
  ].join("\n");
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const fallback = GROUP_DEFAULTS[group];
  const alone = fallback === undefined ? [] : [`\`tickwork ${group}\` alone runs \`tickwork ${group} ${fallback}\`.`];
  return [`Usage: tickwork ${group} <${subcommands(group).join("|")}> [options]`, "", `${GROUPS[group]}:`, ...commandList(commands), "", ...alone, `See tickwork ${group} <command> --help.`, ""].join("\n");
}

function version(): string {
  // Two levels up from src/cli/ and from dist/cli/ alike.
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return `tickwork ${pkg.version}`;
}
