import { describe, expect, it } from "vitest";
import type { Job } from "../../src/queue/job.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

type Page = { jobs: Job[]; next: string | null };

describe.each(allStoreCases())("GET /api/jobs and /api/jobs/:id ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("filters by queue, status and key, newest first", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ n: number; fail?: boolean }>("mail", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    const sms = a.tw.queue<{ n: number }>("sms", { handler: () => {} });
    const m1 = await mail.enqueue({ n: 1 }, { key: "user-1" });
    const m2 = await mail.enqueue({ n: 2, fail: true }, { key: "user-2" });
    const s1 = await sms.enqueue({ n: 3 }, { key: "user-1" });
    await a.tw.tick();
    const m3 = await mail.enqueue({ n: 4 }, { key: "user-1", delay: "1h" });

    const ids = async (query: string) => (await a.get<Page>(`/api/jobs${query}`)).body.jobs.map((j) => j.id);
    expect(await ids("")).toEqual([m3.id, s1.id, m2.id, m1.id]);
    expect(await ids("?queue=mail")).toEqual([m3.id, m2.id, m1.id]);
    expect(await ids("?status=failed")).toEqual([m2.id]);
    expect(await ids("?key=user-1")).toEqual([m3.id, s1.id, m1.id]);
    expect(await ids("?queue=mail&key=user-1&status=succeeded")).toEqual([m1.id]);
    expect(await ids("?queue=sms&status=failed")).toEqual([]);
  });

  it("pages with next as the following page's before, with no overlap and no gap", async () => {
    const a = await admin();
    const bulk = a.tw.queue("bulk", { handler: () => {} });
    const other = a.tw.queue("other", { handler: () => {} });
    const all: string[] = [];
    for (let round = 0; round < 3; round++) {
      all.push(...(await bulk.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ payload: { n } })))).map((j) => j.id));
      await other.enqueue({ round });
    }

    const pages: string[][] = [];
    let next: string | null = null;
    do {
      const { status, body }: { status: number; body: Page } = await a.get<Page>(`/api/jobs?queue=bulk&limit=6${next ? `&before=${next}` : ""}`);
      expect(status).toBe(200);
      pages.push(body.jobs.map((j) => j.id));
      next = body.next;
    } while (next !== null);

    expect(pages.map((p) => p.length)).toEqual([6, 6, 3]);
    expect(pages.flat()).toEqual([...all].sort((x, y) => Number(y) - Number(x)));
  });

  it("gives one job with its payload, attempts and last error; 404 for an id that does not exist", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ to: string }>("mail", { retry: { maxAttempts: 2, backoff: () => 60_000 }, handler: () => { throw new Error("mailbox full"); } });
    const job = await mail.enqueue({ to: "ada@example.com" }, { key: "welcome:ada" });
    await a.tw.tick();
    await a.clock.advance("1m");
    await a.tw.tick();

    const found = await a.get<{ job: Job }>(`/api/jobs/${job.id}`);
    expect(found.status).toBe(200);
    expect(found.body.job).toMatchObject({ id: job.id, queue: "mail", payload: { to: "ada@example.com" }, key: "welcome:ada", status: "failed", attempts: 2, maxAttempts: 2 });
    expect(found.body.job.lastError).toContain("mailbox full");

    const missing = await a.get(`/api/jobs/987654321`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "not_found", message: "job 987654321 does not exist (it may have been pruned by retention)" });
  });
});
