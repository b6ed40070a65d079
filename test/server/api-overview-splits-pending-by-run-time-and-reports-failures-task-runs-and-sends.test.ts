import { describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import type { Overview, QueueSummary } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { MINUTE, SECOND, T0 } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";

const sum = (counts: number[] | undefined) => (counts ?? []).reduce((n, c) => n + c, 0);

describe.each(allStoreCases())("GET /api/overview and /api/queues: what an on-call engineer reads ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("splits a queue's pending jobs into due now and scheduled later, with the run time of the oldest due one", async () => {
    const a = await admin();
    const reports = a.tw.queue<number>("reports"); // no handler: its jobs wait
    await reports.enqueue(1);
    await a.clock.advance("3m");
    await reports.enqueueMany([{ payload: 2 }, { payload: 3, delay: "1h" }, { payload: 4, runAt: T0 + 10 * MINUTE }]);

    const queues = (await a.get<{ queues: QueueSummary[] }>("/api/queues")).body.queues;
    expect(queues.find((q) => q.name === "reports")).toMatchObject({ counts: { pending: 4 }, pending: { due: 2, scheduled: 2, oldestDueAt: T0 } });
    // The overview carries the same split.
    const overview = (await a.get<Overview>("/api/overview")).body;
    expect(overview.queues.find((q) => q.name === "reports")!.pending).toEqual({ due: 2, scheduled: 2, oldestDueAt: T0 });

    // Time passes: the job due at T0 + 10m is due now too, and the oldest due is still the first.
    await a.clock.advance("8m");
    const later = (await a.get<{ queues: QueueSummary[] }>("/api/queues")).body.queues[0]!;
    expect(later.pending).toEqual({ due: 3, scheduled: 1, oldestDueAt: T0 });
  });

  it("counts a big split exactly on both sides", async () => {
    const a = await admin();
    const reports = a.tw.queue<number>("reports");
    const many = (n: number, delay?: string) => Array.from({ length: n }, (_, i) => (delay ? { payload: i, delay } : { payload: i }));
    await reports.enqueueMany(many(120, "1h"));
    await reports.enqueueMany(many(303));
    // Other priorities: each is its own range of the claim index.
    await reports.enqueueMany([...many(7, "2h").map((j) => ({ ...j, priority: 3 })), ...many(4).map((j) => ({ ...j, priority: -2 }))]);
    const q = (await a.get<{ queues: QueueSummary[] }>("/api/queues")).body.queues[0]!;
    expect(q.counts.pending).toBe(434);
    expect(q.pending).toEqual({ due: 307, scheduled: 127, oldestDueAt: T0 });
  });

  it("counts the failed attempts of each queue apart in the throughput, so a failure rate can be read", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ fail: boolean }>("mail", {
      retry: { maxAttempts: 2, backoff: schedule(["1s"]) },
      handler: (job) => {
        if (job.payload.fail) throw new Error("SMTP connection refused");
      },
    });
    await mail.enqueueMany([{ payload: { fail: true } }, { payload: { fail: false } }]);
    await a.tw.tick(); // one succeeds, the other fails and is retried in 1s
    await a.clock.advance("1s");
    await a.tw.tick(); // ... and fails for good

    const { throughput } = (await a.get<Overview>("/api/overview")).body;
    expect(sum(throughput.queues.mail)).toBe(3);
    expect(sum(throughput.failed.mail)).toBe(2);
    expect(throughput.failed.mail).toHaveLength(throughput.queues.mail!.length);
  });

  it("gives the time a task really runs next: the end of its pause or backoff when later than its slot, none while its breaker is open", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("30m") });
    a.tw.task("rates", { every: "5m", run: () => 1 });
    a.tw.task("sweep", { every: "5m", breaker: { after: 1 }, run: () => { throw new Error("chain unreachable"); } });
    a.tw.task("steady", { every: "5m", run: () => 1 });
    await a.clock.advance("5m");
    await a.tw.tick();
    await a.post("/api/tasks/rates/pause", { until: "1h" });

    const tasks = (await a.get<Overview>("/api/overview")).body.scheduler.tasks;
    const task = (name: string) => tasks.find((t) => t.name === name)!;
    // Backing off: its slot comes in 5 minutes, but it runs when the backoff ends.
    expect(task("prices")).toMatchObject({ nextRunAt: T0 + 10 * MINUTE, nextRunAfter: T0 + 35 * MINUTE, runsAt: T0 + 35 * MINUTE });
    // Paused for an hour: its slots pass meanwhile, and the latest runs when the pause ends.
    expect(task("rates")).toMatchObject({ nextRunAt: T0 + 10 * MINUTE, pausedUntil: T0 + 65 * MINUTE, runsAt: T0 + 65 * MINUTE });
    expect(task("sweep")).toMatchObject({ breakerOpen: true, runsAt: null });
    expect(task("steady")).toMatchObject({ nextRunAt: T0 + 10 * MINUTE, runsAt: T0 + 10 * MINUTE });
  });

  it("reports a delivery's next send as the oldest waiting item's due time: in the past while items wait for a pass", async () => {
    const a = await admin();
    const daily = a.tw.delivery<{ user: string }>("daily", { send: () => {} });
    await daily.emit([{ key: "u-1", payload: { user: "u-1" } }]);
    await a.clock.advance("9s");
    await daily.emit([{ key: "u-2", payload: { user: "u-2" } }, { key: "u-3", payload: { user: "u-3" } }]);

    const overview = (await a.get<Overview>("/api/overview")).body;
    expect(overview.now).toBe(T0 + 9 * SECOND);
    // No pass has run (the engine is not started): the outbox's soonest due time is the first item's.
    expect(overview.deliveries[0]).toMatchObject({ name: "daily", pending: 3, retrying: 0, nextAt: T0, lastPass: null });

    await a.tw.tick(); // a pass sends them all: nothing waits
    expect((await a.get<Overview>("/api/overview")).body.deliveries[0]).toMatchObject({ pending: 0, nextAt: null });
  });
});
