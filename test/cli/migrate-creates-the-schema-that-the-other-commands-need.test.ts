import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { DATABASE_URL } from "../support/stores.js";
import { cliDatabases, postgresDatabase, runCli, sqliteDatabase, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/** The schema version this code migrates to. */
async function latestVersion(database: CliDatabase): Promise<number> {
  const store = database.open();
  try {
    return (await store.schemaVersion()).latest;
  } finally {
    await store.close();
  }
}

describe.each(cliDatabases)("tickwork migrate on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  afterEach(async () => database.cleanup());
  afterAll(() => work.cleanup());
  const run = (args: string[]) => runCli([...args, ...database.args], { cwd: work.dir });

  it("creates every table once, says so, and leaves a second run with nothing to do", async () => {
    database = make(work.dir);
    const before = await run(["status"]);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/^tickwork: (no SQLite database at .*: check --db, or create it with `tickwork migrate`|the database has no tickwork tables: run `tickwork migrate` \(or `tickwork start`, which migrates\) first)\n$/);
    if (database.target.kind === "sqlite") expect(existsSync(database.target.path)).toBe(false);

    const latest = await latestVersion(database);
    const first = await run(["migrate"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^(SQLite|PostgreSQL) .*: schema migrated from version 0 to ${latest}\\n$`));

    const second = await run(["migrate", "--json"]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ from: latest, to: latest, latest });

    const status = await run(["status", "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ schema: { current: latest, latest }, queues: [], config: null });
  });
});

describe("the database a command works on", () => {
  const work = workdir();
  afterAll(() => work.cleanup());

  it("refuses a schema older than this tickwork's, saying to migrate (naming both versions once there are two)", async () => {
    const database = sqliteDatabase(work.dir, "old.db");
    expect((await runCli(["migrate", ...database.args], { cwd: work.dir })).code).toBe(0);
    const latest = await latestVersion(database);
    const db = new Database((database.target as { path: string }).path);
    db.prepare("DELETE FROM tickwork_migrations WHERE version = ?").run(latest);
    db.close();
    const result = await runCli(["jobs", "list", ...database.args], { cwd: work.dir });
    expect(result.code).toBe(1);
    // Version 1 is the baseline: a database a step behind it holds none of tickwork's steps.
    const older =
      latest === 1
        ? "tickwork: the database has no tickwork tables: run `tickwork migrate` (or `tickwork start`, which migrates) first\n"
        : `tickwork: the database schema is at version ${latest - 1} and this tickwork needs ${latest}: run \`tickwork migrate\`\n`;
    expect(result.stderr).toBe(older);
  });

  it("comes from TICKWORK_DB when --db is not given, and --db wins over it", async () => {
    const path = `${work.dir}/from-env.db`;
    const fromEnv = await runCli(["migrate"], { cwd: work.dir, env: { TICKWORK_DB: path } });
    expect(fromEnv.stdout).toContain(`SQLite ${path}: schema`);
    const other = `${work.dir}/other.db`;
    const fromFlag = await runCli(["migrate", "--db", other], { cwd: work.dir, env: { TICKWORK_DB: path } });
    expect(fromFlag.stdout).toContain(`SQLite ${other}: schema migrated from version 0`);
  });

  it("is ./tickwork.db by default", async () => {
    const own = workdir();
    try {
      const result = await runCli(["migrate"], { cwd: own.dir });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^SQLite \.\/tickwork\.db: schema migrated from version 0 to \d+\n$/);
      expect(existsSync(`${own.dir}/tickwork.db`)).toBe(true);
    } finally {
      own.cleanup();
    }
  });

  it("takes the PostgreSQL schema from --schema as from ?schema=, and refuses the two disagreeing", async () => {
    const database = postgresDatabase();
    const schema = (database.target as { schema: string }).schema;
    try {
      expect((await runCli(["migrate", "--db", DATABASE_URL, "--schema", schema], { cwd: work.dir })).stdout).toContain(`schema ${schema}: schema migrated from version 0`);
      expect((await runCli(["migrate", ...database.args], { cwd: work.dir })).stdout).toContain(`schema ${schema}: schema already at version`);
      const both = await runCli(["migrate", ...database.args, "--schema", "elsewhere"], { cwd: work.dir });
      expect(both.code).toBe(2);
      expect(both.stderr).toBe(`tickwork migrate: --schema elsewhere and the URL's ?schema=${schema} disagree: give one (see: tickwork migrate --help)\n`);
    } finally {
      await database.cleanup();
    }
  });

  it("fails with exit 1 and one line when PostgreSQL cannot be reached", async () => {
    const result = await runCli(["status", "--db", "postgres://postgres@127.0.0.1:1/test"], { cwd: work.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^tickwork: PostgreSQL is unreachable: .*ECONNREFUSED.*\n$/);
  });
});
