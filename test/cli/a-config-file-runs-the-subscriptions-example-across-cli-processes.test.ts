import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { Job } from "../../src/queue/job.js";
import { openDatabase } from "../../examples/subscriptions/database.js";
import { reply, startFakePaymentServer, type FakePaymentServer } from "../../examples/subscriptions/fake-payment-server.js";
import { insertSubscriptions, listPayments, type NewSubscription } from "../../examples/subscriptions/subscriptions.js";
import { eventually } from "../support/real-time.js";
import { CliProcess, FIXTURES, cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "subscriptions.config.ts");
const HOUR = 3_600_000;

describe.each(cliDatabases)("the subscriptions example as a config file, on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  let server: FakePaymentServer;
  let start: CliProcess | undefined;
  let app: Awaited<ReturnType<typeof openDatabase>> | undefined;
  afterEach(async () => {
    await start?.kill();
    await app?.db.close();
    await server.close();
    await database.cleanup();
  });
  afterAll(() => work.cleanup());

  it("start runs the payments that tasks run schedules from another process, retrying a failed charge", async () => {
    database = make(work.dir);
    server = await startFakePaymentServer();
    server.script("sub-2", [reply.serverError]);
    const now = Date.now();
    const subscription = (id: string, nextDueAt: number): NewSubscription => ({ id, payer: `payer-${id}`, amountCents: 1_000, interval: "monthly", nextDueAt });
    app = await openDatabase(database.target);
    await insertSubscriptions(app.db, [subscription("sub-1", now - HOUR), subscription("sub-2", now - 2 * HOUR), subscription("sub-3", now - 3 * HOUR), subscription("sub-4", now + 24 * HOUR)]);
    await app.store.close();
    const env = { PAYMENTS_URL: server.url };
    const cli = (...args: string[]) => runCli([...args, "--config", CONFIG, ...database.args], { cwd: work.dir, env });

    start = new CliProcess(["start", "--no-server", "--config", CONFIG, ...database.args], { cwd: work.dir, env });
    await start.waitForStderr(/queues payments \(concurrency 5\), payment-runs \(concurrency 1\); tasks schedule-payments/, "the worker process starts");

    const scheduled = await cli("tasks", "run", "schedule-payments");
    expect(scheduled.stdout).toMatch(/^schedule-payments: succeeded in \d+ ms: \{"due":3,"enqueued":3,"alreadyQueued":0\}\n$/);
    expect(scheduled.code).toBe(0);

    const payments = await eventually(async () => {
      const rows = await listPayments(app!.db);
      return rows.length === 3 && rows;
    }, "three payments recorded by the worker process", 20_000);
    expect(payments.map((p) => p.subscriptionId).sort()).toEqual(["sub-1", "sub-2", "sub-3"]);

    const jobs = JSON.parse((await cli("jobs", "list", "--queue", "payments", "--json")).stdout) as Job<{ subscriptionId: string }>[];
    expect(jobs.map((j) => [j.payload.subscriptionId, j.status, j.attempts]).sort()).toEqual([
      ["sub-1", "succeeded", 1],
      ["sub-2", "succeeded", 2],
      ["sub-3", "succeeded", 1],
    ]);
    expect((await cli("tasks", "run", "schedule-payments")).stdout).toMatch(/\{"due":0,"enqueued":0,"alreadyQueued":0\}\n$/);

    start.signal("SIGTERM");
    expect(await start.exited).toEqual({ code: 0, signal: null });
    expect(server.stats.charges).toBe(3);
  });
});
