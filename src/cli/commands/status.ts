import type { TaskStatus } from "../../schedule/task.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, noPositionals } from "../args.js";
import type { Command } from "../command.js";
import { describeDatabase } from "../database.js";
import { EXIT_OK } from "../errors.js";
import { firstLine, print, printJson, table, time } from "../output.js";
import { configOf, openSession } from "../session.js";

const STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;

export const statusCommand: Command = {
  name: "status",
  summary: "the schema version, jobs per queue and status, and the periodic tasks",
  args: "[options]",
  description: [
    "Shows the database's schema version, how many jobs each queue has in each status, and each periodic",
    "task's last run, next run and state. Tasks are those of the config file, when there is one.",
  ].join("\n"),
  options: { ...DATABASE_OPTIONS, ...CONFIG_OPTION, ...JSON_OPTION, ...LOG_LEVEL_OPTION },
  async run(parsed) {
    noPositionals(parsed, "status");
    const session = await openSession(parsed, { command: "status", config: await configOf(parsed, "status", "optional"), mode: "command" });
    try {
      const { tw } = session;
      const [schema, counts, scheduler] = await Promise.all([tw.store.schemaVersion(), tw.jobs.counts(), tw.scheduler.status()]);
      const database = describeDatabase(session.database);
      if (flag(parsed, "json")) {
        printJson({ database, config: session.config?.file ?? null, schema, queues: counts, scheduler });
        return EXIT_OK;
      }
      print(`database  ${database}`);
      print(`schema    version ${schema.current} (this tickwork's latest: ${schema.latest})`);
      print(`config    ${session.config?.file ?? "none loaded"}`);
      print();
      if (counts.length === 0) print("no jobs");
      else {
        const headers = ["QUEUE", ...STATUSES.map((s) => s.toUpperCase())];
        const rows = counts.map(({ queue, counts: c }) => [queue, ...STATUSES.map((s) => String(c[s] ?? 0))]);
        table(headers, rows, headers.slice(1)).forEach((line) => print(line));
      }
      print();
      if (scheduler.pausedUntil !== null) print(`every task is paused until ${time(scheduler.pausedUntil)} (tickwork tasks resume)`);
      if (scheduler.tasks.length === 0) print(session.config ? "the config defines no tasks" : "tasks: load the config file that defines them (--config)");
      else {
        const headers = ["TASK", "SCHEDULE", "LAST RUN", "OUTCOME", "NEXT RUN", "FAILURES", "STATE"];
        const rows = scheduler.tasks.map((t) => [t.name, t.schedule, time(t.lastRunAt), t.lastOutcome ?? "-", time(t.nextRunAt), String(t.consecutiveFailures), state(t)]);
        table(headers, rows, ["FAILURES"]).forEach((line) => print(line));
        for (const t of scheduler.tasks.filter((t) => t.lastOutcome === "failed" && t.lastError)) print(`  ${t.name}: ${firstLine(t.lastError, 120)}`);
      }
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

function state(task: TaskStatus): string {
  if (task.breakerOpen) return "breaker open";
  if (task.running) return "running";
  if (task.pausedUntil !== null) return `paused until ${time(task.pausedUntil)}`;
  if (task.nextRunAfter !== null) return `backing off until ${time(task.nextRunAfter)}`;
  return "active";
}
