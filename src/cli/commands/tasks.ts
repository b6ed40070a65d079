import { toMs } from "../../core/duration.js";
import type { RunResult } from "../../schedule/task.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, noPositionals, positionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import { MAX_TIME_MS } from "../../core/bounds.js";
import { EXIT_FAILURE, EXIT_OK, UsageError } from "../errors.js";
import { firstLine, print, printJson, time } from "../output.js";
import { configOf, openSession, type Session } from "../session.js";
import { globalPause, taskTable } from "../task-table.js";

const COMMON = { ...DATABASE_OPTIONS, ...CONFIG_OPTION, ...JSON_OPTION, ...LOG_LEVEL_OPTION };

export const tasksListCommand: Command = {
  name: "tasks list",
  summary: "the config's periodic tasks: schedule, last and next run, state (also: tickwork tasks)",
  args: "[options]",
  description: [
    "Lists the periodic tasks of the config file (those its setup declares included): schedule, last run and",
    "its outcome, next run, consecutive failures and state (running, paused, backing off, breaker open).",
    "`tickwork tasks` alone does the same. Reads only: the config's setup cannot write to the database here.",
  ].join("\n"),
  options: COMMON,
  async run(parsed) {
    const command = "tasks list";
    noPositionals(parsed, command);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "required"), purpose: "inspect" });
    try {
      const scheduler = await session.tw.scheduler.status();
      if (flag(parsed, "json")) printJson(scheduler);
      else {
        globalPause(scheduler.pausedUntil).forEach((line) => print(line));
        if (scheduler.tasks.length === 0) print(`${session.config!.file} defines no tasks`);
        else taskTable(scheduler.tasks).forEach((line) => print(line));
      }
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

export const tasksRunCommand: Command = {
  name: "tasks run",
  summary: "run a task now, in this process, with the config's code",
  args: "<task|all> [options]",
  description: [
    "Runs a periodic task of the config file now (or every task, with `all`), whatever its schedule, pause",
    "or backoff, and prints each result; a backoff is cleared. A task already running in another process is",
    "not doubled: it is reported as skipped. Exits 1 if a run failed.",
  ].join("\n"),
  options: COMMON,
  async run(parsed) {
    const command = "tasks run";
    const [task] = positionals(parsed, command, "the task to run: a name from the config, or all", 1);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "required"), purpose: "operate" });
    try {
      await checkTask(session, task, command);
      const results = await session.tw.scheduler.runNow(task!);
      if (flag(parsed, "json")) printJson(results);
      else if (results.length === 0) print("the config defines no tasks");
      else results.forEach((r) => print(describeRun(r)));
      return results.some((r) => r.outcome === "failed") ? EXIT_FAILURE : EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

export const tasksPauseCommand: Command = {
  name: "tasks pause",
  summary: "pause every task, or one, for a time",
  args: "[task] (--for <duration> | --until <time>) [options]",
  description: [
    "The kill switch: no task runs on its schedule until the pause ends or `tickwork tasks resume`; `tasks run`",
    "still works. Without a task name every task pauses, and no config is needed; naming a task needs the",
    "config that defines it.",
  ].join("\n"),
  options: {
    for: { type: "string", value: "<duration>", description: 'how long, e.g. "30m", "2h", "1d"' },
    until: { type: "string", value: "<time>", description: "until when: an ISO time (2026-01-01T12:00:00Z) or epoch milliseconds" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "tasks pause";
    const [task] = positionals(parsed, command, "", 0, 1);
    const until = pauseEnd(parsed, command);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "operate" });
    try {
      await checkTask(session, task, command);
      await session.tw.scheduler.pauseUntil(until, task);
      if (flag(parsed, "json")) printJson({ task: task ?? null, pausedUntil: until });
      else print(`${task === undefined ? "every task" : `task ${task}`} paused until ${time(until)}`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

export const tasksResumeCommand: Command = {
  name: "tasks resume",
  summary: "end pauses and close breakers, of every task or one",
  args: "[task] [options]",
  description: [
    "Ends `tasks pause` and closes open breakers: of every task (no config needed), or of the named task",
    "(with the config that defines it).",
  ].join("\n"),
  options: COMMON,
  async run(parsed) {
    const command = "tasks resume";
    const [task] = positionals(parsed, command, "", 0, 1);
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "operate" });
    try {
      await checkTask(session, task, command);
      await session.tw.scheduler.resume(task);
      if (flag(parsed, "json")) printJson({ task: task ?? null, resumed: true });
      else print(`${task === undefined ? "every task" : `task ${task}`} resumed: pauses ended, breakers closed`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

function describeRun(r: RunResult): string {
  const took = r.durationMs === undefined ? "" : ` in ${r.durationMs} ms`;
  switch (r.outcome) {
    case "succeeded":
      return `${r.task}: succeeded${took}${r.result === undefined ? "" : `: ${JSON.stringify(r.result)}`}`;
    case "failed":
      return `${r.task}: failed${took}: ${firstLine(r.error, 200)}`;
    case "backed_off":
      return `${r.task}: backed off${took} (it saw a rate limit)${r.error ? `: ${firstLine(r.error, 200)}` : ""}`;
    case "skipped":
      return `${r.task}: skipped: ${r.reason ?? "not run"}`;
  }
}

/** `--for <duration>` or `--until <time>`, as epoch ms in the future. */
function pauseEnd(parsed: Parsed, command: string): number {
  const forText = stringOption(parsed, "for");
  const untilText = stringOption(parsed, "until");
  if ((forText === undefined) === (untilText === undefined)) throw new UsageError("give how long to pause: --for <duration> (e.g. 2h) or --until <time>, one of them", command);
  const now = Date.now();
  if (forText !== undefined) {
    let ms: number;
    try {
      ms = toMs(forText);
    } catch {
      throw new UsageError(`--for ${forText} is not a duration: use e.g. 30s, 15m, 2h, 1d`, command);
    }
    if (ms <= 0) throw new UsageError("--for must be longer than 0", command);
    return now + ms;
  }
  const at = /^\d+$/.test(untilText!) ? Number(untilText) : Date.parse(untilText!);
  if (Number.isNaN(at)) throw new UsageError(`--until ${untilText} is not a time: use an ISO time such as 2026-01-01T12:00:00Z, or epoch milliseconds`, command);
  if (at <= now) throw new UsageError(`--until ${untilText} is not in the future`, command);
  // The bound every store holds (tickwork's own, not the database's error); shown as typed.
  if (at > MAX_TIME_MS) throw new UsageError(`--until must be a time from 1970 to 9999 (epoch milliseconds 0 to ${MAX_TIME_MS}), got ${untilText}`, command);
  return at;
}

async function checkTask(session: Session, task: string | undefined, command: string): Promise<void> {
  if (task === undefined || (command === "tasks run" && task === "all")) return;
  if (!session.config) throw new UsageError(`naming a task needs the config that defines it (--config <file>); without a name, ${command} applies to every task`, command);
  const defined = (await session.tw.scheduler.status()).tasks.map((t) => t.name);
  if (!defined.includes(task)) throw new UsageError(`unknown task "${task}" (${session.config.file} defines: ${defined.join(", ") || "none"})`, command);
}
