import { DATABASE_OPTIONS, flag, noPositionals } from "../args.js";
import type { Command } from "../command.js";
import { describeDatabase, openStore } from "../database.js";
import { EXIT_OK } from "../errors.js";
import { print, printJson } from "../output.js";
import { databaseOf } from "../session.js";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "create tickwork's tables, or bring them to this version",
  args: "[options]",
  description: [
    "Brings the database's schema to the version this tickwork needs, creating the SQLite file or the",
    "PostgreSQL schema if missing. Versioned, and safe to run from several processes at once and while",
    "workers run. `tickwork start` migrates by itself; the other commands need a migrated database.",
  ].join("\n"),
  options: { ...DATABASE_OPTIONS, json: { type: "boolean", description: "print JSON instead of a sentence" } },
  async run(parsed) {
    noPositionals(parsed, "migrate");
    const database = databaseOf(parsed, "migrate");
    const store = openStore(database, { create: true });
    try {
      const before = await store.schemaVersion();
      await store.migrate();
      const after = await store.schemaVersion();
      const where = describeDatabase(database);
      if (flag(parsed, "json")) printJson({ database: where, from: before.current, to: after.current, latest: after.latest });
      else if (before.current === after.current) print(`${where}: schema already at version ${after.current}`);
      else print(`${where}: schema migrated from version ${before.current} to ${after.current}`);
      return EXIT_OK;
    } finally {
      await store.close();
    }
  },
};
