import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { realEngines, within } from "../support/real-time.js";

describe("enqueueAndWait with started engines, on the system clock", () => {
  const schema = uniqueSchema();
  const dirs: string[] = [];
  const engine = realEngines({
    afterStop: async () => {
      await dropSchema(schema);
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  });

  it("PostgreSQL: the worker in this engine (a hand-off) and a worker in another engine (LISTEN/NOTIFY) both answer", async () => {
    const worker = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" });
    worker.tw.queue<{ n: number }>("double", { handler: (job) => job.payload.n * 2 });
    await worker.tw.start();
    const here = worker.tw.queue<{ n: number }>("here", { handler: (job) => job.payload.n + 1 });

    // The producer polls every hour: only a notification can tell it the job ended.
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" });
    const double = producer.tw.queue<{ n: number }>("double");
    for (let n = 1; n <= 20; n++) expect(await within(double.enqueueAndWait<number>({ n }, { timeout: "10s" }), 10_000, `job ${n} answers`)).toBe(n * 2);
    expect(await within(here.enqueueAndWait<number>({ n: 41 }, { timeout: "10s" }), 10_000, "the local job answers")).toBe(42);
  });

  it("SQLite: a started engine's own jobs answer at once, and another engine's by poll", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-wait-"));
    dirs.push(dir);
    const path = join(dir, "wait.db");
    const worker = await engine({ store: sqlite(path), pollInterval: "50ms" });
    worker.tw.queue<{ n: number }>("double", { handler: (job) => job.payload.n * 2 });
    await worker.tw.start();
    const here = worker.tw.queue<{ n: number }>("here", { handler: (job) => job.payload.n + 1 });
    expect(await within(here.enqueueAndWait<number>({ n: 1 }, { timeout: "10s" }), 10_000, "the local job answers")).toBe(2);

    const producer = await engine({ store: sqlite(path) });
    const double = producer.tw.queue<{ n: number }>("double");
    expect(await within(double.enqueueAndWait<number>({ n: 21 }, { timeout: "10s" }), 10_000, "the other engine's job answers")).toBe(42);
  });
});
