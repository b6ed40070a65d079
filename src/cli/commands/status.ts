import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, noPositionals } from "../args.js";
import type { Command } from "../command.js";
import { describeDatabase } from "../database.js";
import { EXIT_OK } from "../errors.js";
import { print, printJson, table } from "../output.js";
import { configOf, openSession } from "../session.js";
import { globalPause, taskTable } from "../task-table.js";

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
    const session = await openSession(parsed, { command: "status", config: await configOf(parsed, "status", "optional"), purpose: "inspect" });
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
      globalPause(scheduler.pausedUntil).forEach((line) => print(line));
      if (scheduler.tasks.length === 0) print(session.config ? "the config defines no tasks" : "tasks: load the config file that defines them (--config)");
      else taskTable(scheduler.tasks).forEach((line) => print(line));
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

