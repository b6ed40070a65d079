import { describe, expect, it } from "vitest";
import type { QueueFlowView, QueueSummary } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/** A declared queue's flow with no limit set and nothing paused. */
const free = (name: string, pending: number, running = 0, held = 0): QueueFlowView => ({
  name,
  paused: false,
  pausedAt: null,
  pausedGroups: [],
  globalConcurrency: null,
  groupConcurrency: null,
  running,
  held,
  pending,
  buckets: [],
  groups: [],
  heldBy: null,
});

describe.each(allStoreCases())("GET /api/queues ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("gives every declared queue and every queue with jobs, with counts by status and, when declared here, its flow control", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ fail?: boolean }>("mail", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    a.tw.queue("idle", { handler: () => {} });
    a.tw.queue("outbox");
    await mail.enqueueMany([{ payload: {} }, { payload: {} }, { payload: { fail: true } }]);
    await a.tw.tick();
    await a.tw.jobs.cancel((await mail.enqueue({})).id);
    await mail.enqueue({}, { delay: "1h" });
    // Jobs of a queue this process does not declare: another service's, listed with counts only.
    await a.tw.store.queue.insertMany({ queue: "elsewhere", rows: [{ payload: "{}", key: null, priority: 0, runAt: a.clock.now(), maxAttempts: 3 }], now: a.clock.now() });

    const { status, body } = await a.get<{ queues: QueueSummary[] }>("/api/queues");

    expect(status).toBe(200);
    // Pending jobs split by run time: mail's one is an hour ahead, elsewhere's is due since it was written.
    const none = { due: 0, scheduled: 0, oldestDueAt: null };
    expect(body.queues).toEqual([
      { name: "elsewhere", declared: false, hasHandler: false, concurrency: null, runningHere: 0, counts: { pending: 1, running: 0, succeeded: 0, failed: 0, cancelled: 0 }, pending: { due: 1, scheduled: 0, oldestDueAt: a.clock.now() }, flow: null },
      { name: "idle", declared: true, hasHandler: true, concurrency: 1, runningHere: 0, counts: { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }, pending: none, flow: free("idle", 0) },
      { name: "mail", declared: true, hasHandler: true, concurrency: 1, runningHere: 0, counts: { pending: 1, running: 0, succeeded: 2, failed: 1, cancelled: 1 }, pending: { due: 0, scheduled: 1, oldestDueAt: null }, flow: free("mail", 1) },
      { name: "outbox", declared: true, hasHandler: false, concurrency: 1, runningHere: 0, counts: { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }, pending: none, flow: free("outbox", 0) },
    ]);
  });
});
