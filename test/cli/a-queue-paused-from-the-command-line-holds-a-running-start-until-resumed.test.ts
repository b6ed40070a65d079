import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { eventually } from "../support/real-time.js";
import { ADMIN_TOKEN, CliProcess, FIXTURES, cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "flow.config.ts");

/** An engine of the test's own on the CLI's database: it enqueues, and reads what happened. */
async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  tw.queue<{ tenant: string }>("work", { group: (p) => p.tenant });
  try {
    return await fn(tw);
  } finally {
    await tw.stop();
  }
}

describe.each(cliDatabases)("tickwork queues pause and a running tickwork start on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  let start: CliProcess | undefined;
  afterEach(async () => {
    await start?.kill();
    await database.cleanup();
  });
  afterAll(() => work.cleanup());
  const run = (...args: string[]) => runCli([...args, ...database.args, "--config", CONFIG], { cwd: work.dir, env: { FIXTURE_MARKERS: work.dir } });

  it("the worker of another process starts none of the queue's jobs while it is paused, and runs them once resumed", async () => {
    database = make(work.dir);
    expect((await runCli(["migrate", ...database.args], { cwd: work.dir })).code).toBe(0);
    start = new CliProcess(["start", "--config", CONFIG, ...database.args, "--port", "0", "--json"], { cwd: work.dir, env: { TICKWORK_ADMIN_TOKEN: ADMIN_TOKEN, FIXTURE_MARKERS: work.dir } });
    await start.waitForStderr(/admin API and dashboard at http:\/\/\S+/, "the server's address");

    expect((await run("queues", "pause", "work")).code).toBe(0);
    const ids = await withEngine(database, async (tw) => [(await tw.enqueue("work", { tenant: "acme" })).id, (await tw.enqueue("work", { tenant: "globex" })).id]);
    // The other process claimed, found the queue paused, and said so: nothing of it started.
    await start.waitForEvent("queue.throttled", "the worker is held by the pause", (e) => e.queue === "work" && e.by === "paused");
    expect(ids.filter((id) => existsSync(join(work.dir, `work-${id}`)))).toEqual([]);
    const [paused] = JSON.parse((await run("queues", "status", "work", "--json")).stdout) as { paused: boolean; pending: number; running: number }[];
    expect(paused).toMatchObject({ paused: true, pending: 2, running: 0 });

    expect((await run("queues", "resume", "work")).code).toBe(0);
    await eventually(() => ids.every((id) => existsSync(join(work.dir, `work-${id}`))), "both jobs run after the resume", 20_000);
    // The handler writes its file before the job is marked done: wait for that too.
    const statuses = () => withEngine(database, async (tw) => Promise.all(ids.map(async (id) => (await tw.jobs.get(id))?.status)));
    await eventually(async () => (await statuses()).every((s) => s === "succeeded"), "both jobs succeed", 20_000);
  });
});
