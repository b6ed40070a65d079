import { describe, expect, it } from "vitest";
import type { JobAnswer } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("POST /api/jobs/:id/promote ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("makes a job scheduled for later due now, and it runs at the next pass", async () => {
    const a = await admin();
    const ran: number[] = [];
    const mail = a.tw.queue<number>("mail", { handler: (job) => void ran.push(job.payload) });
    const later = await mail.enqueue(7, { delay: "1h" });
    await a.tw.tick();
    expect(ran).toEqual([]);

    const promoted = await a.post<JobAnswer>(`/api/jobs/${later.id}/promote`);
    expect(promoted.status).toBe(200);
    expect(promoted.body.job).toMatchObject({ id: later.id, status: "pending", runAt: a.clock.now(), payload: 7 });
    expect(promoted.body.now).toBe(a.clock.now());
    expect((await a.get<{ jobs: unknown[] }>("/api/jobs?due=true")).body.jobs).toHaveLength(1);

    await a.tw.tick();
    expect(ran).toEqual([7]);
    expect((await a.tw.jobs.get(later.id))?.status).toBe("succeeded");
  });

  it("refuses a finished job with a 409 naming its status, and an unknown id with a 404", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    const job = await mail.enqueue({});
    await a.tw.tick();

    const finished = await a.post(`/api/jobs/${job.id}/promote`);
    expect(finished.status).toBe(409);
    expect(finished.body).toEqual({ error: "conflict", code: "TW_JOB_STATE", message: `job ${job.id} is succeeded; only a pending job can be promoted` });

    const unknown = await a.post("/api/jobs/987654321/promote");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "not_found", code: "TW_JOB_NOT_FOUND" });

    const bad = await a.post("/api/jobs/x/promote");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: "invalid_path", message: 'id: a job id is a positive integer such as "42"' });
  });
});
