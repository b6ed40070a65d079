import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import type { SqliteConnection } from "../../src/db/sqlite-executor.js";
import { MissingPeerError, requirePeer } from "../../src/store/peer.js";
import { bunSqliteModule } from "../../src/store/bun-sqlite.js";
import { nodeSqliteModule } from "../../src/store/node-sqlite.js";
import { openSqlite, SqliteDriverUnavailableError, type SqliteDriver } from "../../src/store/sqlite-driver.js";
import { sqlite } from "../../src/store/sqlite.js";
import { expectBetterSqliteRefused } from "../runtime/support/better-sqlite3-refused.js";
import type { StoreCase } from "../support/stores.js";
import { SECOND, T0, engineFor } from "../support/queue-fixtures.js";

/**
 * The same queue round trip on every SQLite driver the running runtime has: better-sqlite3 on Node 20
 * (whose ABI its native module is built for), node:sqlite on Node 22.13 and later, bun:sqlite under
 * Bun. test/contract runs every module's suite on the driver "auto" picks; this file runs each driver.
 */
const hasNodeSqlite = nodeSqliteModule() !== undefined;
const hasBunSqlite = bunSqliteModule() !== undefined;
const betterSqliteLoads = loads("better-sqlite3");
const available: SqliteDriver[] = [
  ...(betterSqliteLoads ? (["better-sqlite3"] as const) : []),
  ...(hasNodeSqlite ? (["node:sqlite"] as const) : []),
  ...(hasBunSqlite ? (["bun:sqlite"] as const) : []),
];
const nodeMajor = Number(process.versions.node.split(".")[0]);
const autoDriver: SqliteDriver = hasBunSqlite ? "bun:sqlite" : hasNodeSqlite ? "node:sqlite" : "better-sqlite3";

function loads(driver: SqliteDriver): boolean {
  try {
    openSqlite(":memory:", { driver }).close();
    return true;
  } catch (error) {
    // A native module built for another Node's ABI: this runtime cannot have better-sqlite3.
    if (error instanceof SqliteDriverUnavailableError) return false;
    throw error;
  }
}

function fileCase(driver: SqliteDriver): StoreCase {
  let dir: string | undefined;
  return {
    name: "sqlite-file",
    make() {
      dir = mkdtempSync(join(tmpdir(), "tickwork-driver-"));
      return sqlite(join(dir, "tickwork.db"), { driver });
    },
    reopen: () => sqlite(join(dir!, "tickwork.db"), { driver }),
    cleanup: async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("the SQLite drivers this runtime has", () => {
  it("include better-sqlite3 on Node 20, node:sqlite from Node 22.13, bun:sqlite under Bun", () => {
    if (hasBunSqlite) expect(available).toContain("bun:sqlite");
    else if (nodeMajor === 20) expect(available).toEqual(["better-sqlite3"]);
    else if (nodeMajor >= 23 || (nodeMajor === 22 && Number(process.versions.node.split(".")[1]) >= 13)) expect(available).toContain("node:sqlite");
    expect(available.length).toBeGreaterThan(0);
  });

  it(`"auto" opens the runtime's own SQLite where it has one, else better-sqlite3`, () => {
    const store = sqlite(":memory:");
    expect(store.name).toBe(`sqlite(:memory:, ${autoDriver})`);
    void store.close();
  });
});

describe.each(available)("a queue round trip on %s", (driver) => {
  const storeCase = fileCase(driver);
  const engine = engineFor(storeCase);

  it("names the driver in the store's name", async () => {
    const { tw } = await engine();
    expect(tw.store.name).toMatch(new RegExp(`^sqlite\\(.+tickwork\\.db, ${driver}\\)$`));
  });

  it("enqueues a job, runs it and records it succeeded", async () => {
    const { tw } = await engine();
    const seen: unknown[] = [];
    const q = tw.queue("mail", { handler: (job) => void seen.push(job.payload) });
    const job = await q.enqueue({ to: "a@example.com" });
    expect(job).toMatchObject({ status: "pending", attempts: 0, runAt: T0, duplicate: false });

    expect((await tw.tick()).ran).toBe(1);

    expect(seen).toEqual([{ to: "a@example.com" }]);
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", attempts: 1, finishedAt: T0 });
  });

  it("retries a failed attempt on its backoff and keeps the last error", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("flaky", {
      retry: { maxAttempts: 3, backoff: () => 10 * SECOND },
      handler: (_job, ctx) => {
        if (ctx.attempt === 1) throw new Error("upstream down");
      },
    });
    const { id } = await q.enqueue({});

    expect((await tw.tick()).ran).toBe(1);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 1, runAt: T0 + 10 * SECOND, lastError: expect.stringContaining("upstream down") });
    expect((await tw.tick()).ran).toBe(0);

    await clock.advance(10 * SECOND);
    expect((await tw.tick()).ran).toBe(1);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("skips a duplicate key while its job is live, and takes the key again once it finished", async () => {
    const { tw } = await engine();
    const q = tw.queue("charges", { handler: () => {} });
    const first = await q.enqueue({ n: 1 }, { key: "order-7" });
    const again = await q.enqueue({ n: 2 }, { key: "order-7" });
    expect(again).toMatchObject({ id: first.id, duplicate: true, payload: { n: 1 } });

    expect((await tw.tick()).ran).toBe(1);
    const after = await q.enqueue({ n: 3 }, { key: "order-7" });
    expect(after.duplicate).toBe(false);
    expect(after.id).not.toBe(first.id);
  });

  it("keeps the jobs in the file for the next connection", async () => {
    const { tw } = await engine();
    const { id } = await tw.queue("kept", { handler: () => {} }).enqueue({ n: 1 });
    const reopened = storeCase.reopen();
    try {
      expect(await reopened.queue.get({ id })).toMatchObject({ id, queue: "kept", status: "pending" });
    } finally {
      await reopened.close();
    }
  });
});

describe.each(available)("the connection %s opens", (driver) => {
  let connection: SqliteConnection | undefined;
  afterEach(() => {
    connection?.close();
    connection = undefined;
  });
  const open = () => (connection = openSqlite(":memory:", { driver }));

  it("binds up to maxParams values in one statement and refuses one more", () => {
    const { executor, maxParams } = open();
    expect(maxParams).toBeGreaterThanOrEqual(32_766);
    const holes = (n: number) => `SELECT count(*) AS n FROM (SELECT 1) WHERE 1 IN (${Array(n).fill("?").join(",")})`;
    expect(executor.all(holes(maxParams), Array(maxParams).fill(1))).toEqual([{ n: 1 }]);
    expect(() => executor.all(holes(maxParams + 1), Array(maxParams + 1).fill(1))).toThrow(/too many SQL variables/);
  });

  it("answers rows as plain objects of every column, in order, whatever the statement returns", () => {
    const { executor: db } = open();
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, blob_free TEXT)");
    expect(db.all("INSERT INTO t (name, score) VALUES (?, ?), (?, ?) RETURNING id, name, score", ["a", 1.5, "b", null])).toEqual([
      { id: 1, name: "a", score: 1.5 },
      { id: 2, name: "b", score: null },
    ]);
    const [row] = db.all<Record<string, unknown>>("SELECT t.*, 7 AS seven FROM t WHERE id = ?", [1]);
    expect(Object.keys(row!)).toEqual(["id", "name", "score", "blob_free", "seven"]);
    expect(row).toEqual({ id: 1, name: "a", score: 1.5, blob_free: null, seven: 7 });
    // Two columns of one name: the last one read wins, as every driver builds its rows.
    expect(db.all("SELECT 1 AS x, 2 AS x")).toEqual([{ x: 2 }]);
    expect(db.all("UPDATE t SET score = 0 WHERE id = 0")).toEqual([]);
  });

  it("rolls back only a nested transaction that throws, and all of an outer one that throws", () => {
    const { executor: db } = open();
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
    const keys = () => db.all<{ k: string }>("SELECT k FROM t ORDER BY k").map((r) => r.k);

    db.transaction(() => {
      db.run("INSERT INTO t (k) VALUES (?)", ["outer"]);
      expect(() =>
        db.transaction(() => {
          db.run("INSERT INTO t (k) VALUES (?)", ["inner"]);
          throw new Error("inner failed");
        }),
      ).toThrow("inner failed");
    });
    expect(keys()).toEqual(["outer"]);

    expect(() =>
      db.transaction(() => {
        db.run("INSERT INTO t (k) VALUES (?)", ["gone"]);
        db.transaction(() => db.run("INSERT INTO t (k) VALUES (?)", ["gone-inner"]));
        throw new Error("outer failed");
      }),
    ).toThrow("outer failed");
    expect(keys()).toEqual(["outer"]);
    expect(db.run("DELETE FROM t WHERE k = ?", ["outer"])).toBe(1);
  });

  it("sets WAL, synchronous NORMAL and the busy timeout", () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-pragmas-"));
    try {
      const opened = openSqlite(join(dir, "p.db"), { driver, busyTimeoutMs: 1234 });
      try {
        const one = <T>(sql: string) => Object.values(opened.executor.all<Record<string, T>>(sql)[0] ?? {})[0];
        expect(one("PRAGMA journal_mode")).toBe("wal");
        expect(one("PRAGMA synchronous")).toBe(1);
        expect(one("PRAGMA busy_timeout")).toBe(1234);
      } finally {
        opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("choosing a driver", () => {
  it("refuses an unknown driver with an InvalidInputError naming the driver option", () => {
    const attempt = () => sqlite(":memory:", { driver: "sqlite3" as SqliteDriver });
    expect(attempt).toThrow(InvalidInputError);
    expect(attempt).toThrow(`sqlite(): the driver option must be one of "auto", "node:sqlite", "bun:sqlite", "better-sqlite3"; got "sqlite3"`);
  });

  const lacking = (["node:sqlite", "bun:sqlite"] as const).filter((d) => !available.includes(d));
  it.each(lacking)("refuses %s where the runtime lacks it, naming the driver option", (driver) => {
    let thrown: unknown;
    try {
      sqlite(":memory:", { driver });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SqliteDriverUnavailableError);
    expect(thrown).toMatchObject({ code: "TW_SQLITE_DRIVER_UNAVAILABLE", driver, message: expect.stringContaining(`the driver option "${driver}" needs`) });
  });

  // better-sqlite3 is built for the Node that ran `npm ci` (20 in CI); Node 22 and 24 cannot load it.
  it.runIf(!betterSqliteLoads)("refuses better-sqlite3 where its addon cannot load, naming the runtime and carrying the addon's error", () => {
    // On Node the remedy also offers `npm rebuild better-sqlite3`: only the part every runtime shares is checked.
    const thrown = expectBetterSqliteRefused("(Node|Bun|Deno)", 'use driver "auto"');
    expect(thrown.cause).toBeInstanceOf(Error);
  });

  it("refuses a busyTimeoutMs that is not a whole number of milliseconds", () => {
    expect(() => sqlite(":memory:", { busyTimeoutMs: 1.5 })).toThrow(/the busyTimeoutMs option must be a whole number of milliseconds .* got 1\.5/);
  });

  it("names a missing optional peer in a MissingPeerError", () => {
    let thrown: unknown;
    try {
      requirePeer("tickwork-test-no-such-package", "sqlite() from tickwork/sqlite");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MissingPeerError);
    expect(thrown).toMatchObject({
      code: "TW_MISSING_PEER",
      packageName: "tickwork-test-no-such-package",
      message: 'sqlite() from tickwork/sqlite needs the package "tickwork-test-no-such-package": install it with `npm install tickwork-test-no-such-package`',
    });
  });
});

describe("warnings", () => {
  const exec = promisify(execFile);
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("opening a store prints no ExperimentalWarning for SQLite and lets other warnings through", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-warn-"));
    dirs.push(dir);
    const script = join(dir, "open.mts");
    writeFileSync(
      script,
      `import { sqlite } from ${JSON.stringify(pathToFileURL(join(process.cwd(), "src/store/sqlite.ts")).href)};
const store = sqlite(":memory:");
console.log(store.name);
process.emitWarning("another experiment", "ExperimentalWarning");
await store.close();
`,
    );
    const { stdout, stderr } = await exec(process.execPath, ["--import", "tsx", script], { cwd: process.cwd() });
    expect(stdout.trim()).toBe(`sqlite(:memory:, ${autoDriver})`);
    expect(stderr).not.toContain("SQLite is an experimental feature");
    expect(stderr).toContain("ExperimentalWarning: another experiment");
  });
});
