import { describe, expect, it } from "vitest";
import type { Job } from "../../src/queue/job.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("POST /api/jobs/:id/retry, /cancel and /api/queues/:queue/retry-failed and /cancel-pending ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("retries a failed job, which then runs and succeeds; a pending job cannot be retried (409)", async () => {
    const a = await admin();
    let down = true;
    const mail = a.tw.queue("mail", { retry: { maxAttempts: 1 }, handler: () => { if (down) throw new Error("smtp down"); } });
    const job = await mail.enqueue({ to: "ada" });
    await a.tw.tick();
    expect((await a.tw.jobs.get(job.id))?.status).toBe("failed");

    const retried = await a.post<{ job: Job }>(`/api/jobs/${job.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.job).toMatchObject({ id: job.id, status: "pending", attempts: 0 });

    const again = await a.post(`/api/jobs/${job.id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "conflict", code: "TW_JOB_STATE", message: `job ${job.id} is pending; only failed or cancelled jobs can be retried` });

    down = false;
    await a.tw.tick();
    expect((await a.tw.jobs.get(job.id))?.status).toBe("succeeded");
  });

  it("cancels a pending job; a finished one cannot be cancelled (409); an unknown id is 404", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    const later = await mail.enqueue({}, { delay: "1h" });

    const cancelled = await a.post<{ job: Job }>(`/api/jobs/${later.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.job).toMatchObject({ id: later.id, status: "cancelled" });

    const twice = await a.post(`/api/jobs/${later.id}/cancel`);
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ error: "conflict" });

    const unknown = await a.post(`/api/jobs/987654321/cancel`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "not_found" });
  });

  it("retries every failed job of one queue and no other", async () => {
    const a = await admin();
    let down = true;
    const mail = a.tw.queue("mail", { retry: { maxAttempts: 1 }, handler: () => { if (down) throw new Error("down"); } });
    const sms = a.tw.queue("sms", { retry: { maxAttempts: 1 }, handler: () => { if (down) throw new Error("down"); } });
    await mail.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await sms.enqueue(4);
    await a.tw.tick();

    const res = await a.post("/api/queues/mail/retry-failed");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queue: "mail", retried: 3 });
    down = false;
    await a.tw.tick();
    expect(await a.tw.jobs.counts()).toEqual(
      expect.arrayContaining([
        { queue: "mail", counts: { pending: 0, running: 0, succeeded: 3, failed: 0, cancelled: 0 } },
        { queue: "sms", counts: { pending: 0, running: 0, succeeded: 0, failed: 1, cancelled: 0 } },
      ]),
    );

    const unknown = await a.post("/api/queues/nope/retry-failed");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: "not_found", code: "TW_UNKNOWN_QUEUE", message: 'queue "nope" is not declared in this process (declared: mail, sms)' });
  });

  it("cancels every pending job of one queue, due or scheduled, and no running job or other queue's", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    const sms = a.tw.queue("sms", { handler: () => {} });
    await mail.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    await mail.enqueue(3, { delay: "1h" });
    await sms.enqueue(4);

    const res = await a.post("/api/queues/mail/cancel-pending");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queue: "mail", cancelled: 3 });
    expect(await a.tw.jobs.counts()).toEqual(
      expect.arrayContaining([
        { queue: "mail", counts: { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 3 } },
        { queue: "sms", counts: { pending: 1, running: 0, succeeded: 0, failed: 0, cancelled: 0 } },
      ]),
    );

    const unknown = await a.post("/api/queues/nope/cancel-pending");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "not_found", code: "TW_UNKNOWN_QUEUE" });
  });
});
