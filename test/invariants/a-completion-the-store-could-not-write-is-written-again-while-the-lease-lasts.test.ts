import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import type { LogEvent } from "../../src/core/logger.js";
import { DatabaseProxy } from "../support/database-proxy.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";
import { dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * A job's outcome is written after its handler returns. When that write fails (the database
 * restarting, a connection cut, a write lock held too long), it is written again while the job's
 * lease lasts, fenced by the lease: the job ends as its handler said, once, instead of running again
 * after its lease lapses.
 */
describe("a completion the store could not write is written again while the lease lasts", () => {
  const schema = uniqueSchema();
  const proxy = new DatabaseProxy();
  const dirs: string[] = [];
  const engine = realEngines({
    afterStop: async () => {
      await proxy.close();
      await dropSchema(schema);
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  });

  /**
   * Runs one job on `store`, whose handler returns while `outage` is on: the outcome's write fails,
   * is logged once, and lands once the outage ends. The job succeeded, its handler ran once.
   */
  async function completesThrough(store: Store, outage: { begin(): unknown; end(): unknown }): Promise<void> {
    const { tw, named } = await engine({ store });
    const started = deferred();
    const finish = deferred();
    let runs = 0;
    const queue = tw.queue("invoices", {
      lease: "3s",
      handler: async () => {
        runs++;
        started.resolve();
        await finish.promise;
        return { invoiced: true };
      },
    });
    await tw.start();
    const job = await queue.enqueue({ customer: "acme" });
    await started.promise;

    await outage.begin();
    finish.resolve();
    let failure: LogEvent;
    try {
      failure = await eventually(() => named("store.error").find((e) => e.operation === "settle"), "the failed write of the outcome to be logged", 10_000);
    } finally {
      await outage.end();
    }

    const done = await eventually(async () => {
      const found = await tw.jobs.get(job.id);
      return found?.status === "succeeded" && found;
    }, "the job to be recorded succeeded", 20_000);
    expect(done).toMatchObject({ attempts: 1, result: { invoiced: true } });
    expect(runs).toBe(1);
    expect(named("job.lease_expired")).toEqual([]);
    // Logged once for the outage, with what waits to be written again.
    expect(failure).toMatchObject({ level: "error", queue: "invoices", retrying: 1 });
  }

  it("PostgreSQL: the database goes away as the handler returns and comes back: the job succeeded, its handler ran once", async () => {
    await proxy.open();
    await completesThrough(postgres({ url: proxy.url, schema }), { begin: () => proxy.close(), end: () => proxy.open() });
  });

  it("SQLite: another connection holds the write lock past the busy timeout as the handler returns: the job succeeded once it let go, its handler ran once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-completion-"));
    dirs.push(dir);
    const path = join(dir, "jobs.db");
    const other = new Database(path);
    await completesThrough(sqlite(path, { busyTimeoutMs: 50 }), {
      begin: () => other.exec("BEGIN IMMEDIATE"),
      end: () => {
        other.exec("COMMIT");
        other.close();
      },
    });
  });
});
