import { describe, expect, it } from "vitest";
import type { JobAnswer, JobPage } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { deferred } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("POST /api/jobs/:id/delete ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("deletes a succeeded, a failed and a cancelled job, answering each as it was", async () => {
    const a = await admin();
    const mail = a.tw.queue<string>("mail", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        if (job.payload === "bounce") throw new Error("mailbox full");
        return { sent: job.payload };
      },
    });
    const sent = await mail.enqueue("ok", { key: "welcome:ada" });
    const bounced = await mail.enqueue("bounce");
    const kept = await mail.enqueue("kept");
    await a.tw.tick();
    const cancelled = await mail.enqueue("later", { delay: "1h" });
    await a.tw.jobs.cancel(cancelled.id);

    for (const [job, status] of [[sent, "succeeded"], [bounced, "failed"], [cancelled, "cancelled"]] as const) {
      const deleted = await a.post<JobAnswer>(`/api/jobs/${job.id}/delete`);
      expect(deleted.status, status).toBe(200);
      expect(deleted.body.now).toBe(a.clock.now());
      expect(deleted.body.job).toMatchObject({ id: job.id, queue: "mail", status, lease: null });
      // Gone: its page is a 404 and no list shows it.
      expect((await a.get(`/api/jobs/${job.id}`)).status).toBe(404);
      expect((await a.post(`/api/jobs/${job.id}/delete`)).status).toBe(404);
    }
    const listed = await a.get<JobPage>("/api/jobs?queue=mail");
    expect(listed.body.jobs.map((j) => j.id)).toEqual([kept.id]);
    expect(a.named("job.deleted").map((e) => [e.id, e.status])).toEqual([
      [sent.id, "succeeded"],
      [bounced.id, "failed"],
      [cancelled.id, "cancelled"],
    ]);
  });

  it("refuses a pending or a running job with a 409, an unknown id with a 404, and deletes nothing", async () => {
    const a = await admin();
    const started = deferred();
    const gate = deferred();
    const reports = a.tw.queue<string>("reports", {
      handler: async (job) => {
        if (job.payload !== "slow") return;
        started.resolve();
        await gate.promise;
      },
    });
    const slow = await reports.enqueue("slow");
    const ticked = a.tw.tick();
    await started.promise;
    const waiting = await reports.enqueue("waiting", { delay: "1h" });

    for (const [job, status] of [[slow, "running"], [waiting, "pending"]] as const) {
      const refused = await a.post(`/api/jobs/${job.id}/delete`);
      expect(refused.status, status).toBe(409);
      expect(refused.body).toEqual({
        error: "conflict",
        code: "TW_JOB_STATE",
        message: `job ${job.id} is ${status}; only finished jobs (succeeded, failed, cancelled) can be deleted: cancel it first`,
      });
      expect((await a.tw.jobs.get(job.id))?.status).toBe(status);
    }

    const unknown = await a.post("/api/jobs/987654321/delete");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "not_found", code: "TW_JOB_NOT_FOUND" });
    const bad = await a.post("/api/jobs/0/delete");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: "invalid_path", message: 'id: a job id is a positive integer such as "42"' });
    // A write: without the token it is refused, and the job stays.
    gate.resolve();
    await ticked;
    const unauthorised = await a.request("POST", `/api/jobs/${slow.id}/delete`, { token: null });
    expect(unauthorised.status).toBe(401);
    expect((await a.tw.jobs.get(slow.id))?.status).toBe("succeeded");
    expect(a.named("job.deleted")).toEqual([]);
  });
});
