import { describe, expect, it } from "vitest";
import type { JobAnswer, JobPage } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

type Page = JobPage;

describe.each(allStoreCases())("GET /api/jobs and /api/jobs/:id ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("filters by queue, status, due or scheduled, key and id, newest first", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ n: number; fail?: boolean }>("mail", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    const sms = a.tw.queue<{ n: number }>("sms", { handler: () => {} });
    const m1 = await mail.enqueue({ n: 1 }, { key: "user-1" });
    const m2 = await mail.enqueue({ n: 2, fail: true }, { key: "user-2" });
    const s1 = await sms.enqueue({ n: 3 }, { key: "user-1" });
    await a.tw.tick();
    const m3 = await mail.enqueue({ n: 4 }, { key: "user-1", delay: "1h" });
    const m4 = await mail.enqueue({ n: 5 }, { key: "user-3" });

    const ids = async (query: string) => (await a.get<Page>(`/api/jobs${query}`)).body.jobs.map((j) => j.id);
    expect(await ids("")).toEqual([m4.id, m3.id, s1.id, m2.id, m1.id]);
    expect(await ids("?queue=mail")).toEqual([m4.id, m3.id, m2.id, m1.id]);
    expect(await ids("?status=failed")).toEqual([m2.id]);
    expect(await ids("?key=user-1")).toEqual([m3.id, s1.id, m1.id]);
    expect(await ids("?queue=mail&key=user-1&status=succeeded")).toEqual([m1.id]);
    expect(await ids("?queue=sms&status=failed")).toEqual([]);
    // Pending jobs split by the engine's clock: due now (the backlog) or scheduled for later.
    expect(await ids("?status=pending")).toEqual([m4.id, m3.id]);
    expect(await ids("?status=pending&due=true")).toEqual([m4.id]);
    expect(await ids("?due=false")).toEqual([m3.id]);
    expect(await ids("?queue=mail&key=user-1&due=false")).toEqual([m3.id]);
    // Search by id: the job, if it passes the other filters.
    expect(await ids(`?id=${m2.id}`)).toEqual([m2.id]);
    expect(await ids(`?id=${m2.id}&status=failed&queue=mail&key=user-2`)).toEqual([m2.id]);
    expect(await ids(`?id=${m2.id}&status=succeeded`)).toEqual([]);
    expect(await ids(`?id=${m3.id}&due=false`)).toEqual([m3.id]);
    expect(await ids(`?id=${m3.id}&due=true`)).toEqual([]);
    expect(await ids(`?id=${s1.id}&queue=mail`)).toEqual([]);
    expect(await ids(`?id=${m4.id}&before=${m4.id}`)).toEqual([]);
    expect(await ids("?id=987654321")).toEqual([]);

    // The clock moves on: the scheduled job becomes due.
    await a.clock.advance("1h");
    expect(await ids("?due=true")).toEqual([m4.id, m3.id]);
    const page = await a.get<Page>(`/api/jobs?id=${m3.id}`);
    expect(page.body).toMatchObject({ next: null, now: a.clock.now() });
  });

  it("parent lists a flow's or a batch's direct children, with the other filters, pages and the id search", async () => {
    const a = await admin();
    const fetch = a.tw.queue<{ n: number; fail?: boolean }>("fetch", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("refused"); } });
    const report = a.tw.queue<{ name: string }>("report", { handler: () => {} });
    const flow = await report.enqueueFlow({
      payload: { name: "daily" },
      onChildFailure: "continue",
      children: [
        { queue: "fetch", payload: { n: 1 } },
        { queue: "report", payload: { name: "sub" }, children: [{ queue: "fetch", payload: { n: 2 } }] },
        { queue: "fetch", payload: { n: 3, fail: true } },
      ],
    });
    const other = await report.enqueueFlow({ payload: { name: "other" }, children: [{ queue: "fetch", payload: { n: 4 } }] });
    const batch = await a.tw.batch([{ n: 5 }, { n: 6 }], { queue: "fetch", onComplete: { queue: "report", payload: { name: "batch" } } });
    const loose = await fetch.enqueue({ n: 7 });
    for (let i = 0; i < 10; i++) if ((await a.tw.tick()).ran === 0) break;

    const [c1, sub, c3] = flow.children.map((c) => c.id) as [string, string, string];
    const ids = async (query: string) => (await a.get<Page>(`/api/jobs${query}`)).body.jobs.map((j) => j.id);
    expect(await ids(`?parent=${flow.id}&order=oldest`)).toEqual([c1, sub, c3]);
    expect(await ids(`?parent=${flow.id}`)).toEqual([c3, sub, c1]);
    expect((await a.get<Page>(`/api/jobs?parent=${flow.id}&order=oldest`)).body.jobs.map((j) => j.status)).toEqual(["succeeded", "succeeded", "failed"]);
    expect(await ids(`?parent=${flow.id}&status=failed`)).toEqual([c3]);
    expect(await ids(`?parent=${flow.id}&queue=report`)).toEqual([sub]);
    expect(await ids(`?parent=${sub}`)).toEqual([flow.children[1]!.children[0]!.id]);
    expect(await ids(`?parent=${other.id}`)).toEqual([other.children[0]!.id]);
    expect(await ids(`?parent=${batch.id}&order=oldest`)).toEqual(batch.jobs);
    expect(await ids(`?parent=${loose.id}`)).toEqual([]);
    // Pages within the parent's children.
    const first = await a.get<Page>(`/api/jobs?parent=${flow.id}&order=oldest&limit=2`);
    expect(first.body).toMatchObject({ next: sub });
    expect(await ids(`?parent=${flow.id}&order=oldest&after=${first.body.next}`)).toEqual([c3]);
    // Search by id: the job, if it is one of this parent's children.
    expect(await ids(`?id=${c3}&parent=${flow.id}`)).toEqual([c3]);
    expect(await ids(`?id=${c3}&parent=${other.id}`)).toEqual([]);
    expect(await ids(`?id=${loose.id}&parent=${flow.id}`)).toEqual([]);
  });

  it("lists summaries with a payload preview and a parent's children counted: no result, progress or attempts", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => ({ sent: true }) });
    const job = await mail.enqueue({ to: "ada" }, { key: "k" });
    await a.tw.tick();
    const { body } = await a.get<Page>("/api/jobs");
    expect(Object.keys(body.jobs[0]!).sort()).toEqual(
      ["id", "queue", "key", "group", "status", "priority", "runAt", "attempts", "maxAttempts", "lastError", "createdAt", "startedAt", "finishedAt", "children", "payloadPreview", "payloadChars", "payloadTruncated"].sort(),
    );
    expect(body.jobs[0]).toMatchObject({ id: job.id, status: "succeeded", payloadPreview: '{"to":"ada"}', children: null });

    // A parent waiting for its children says how many have not ended: the list can show it waiting.
    a.tw.queue("parts");
    const flow = await mail.enqueueFlow({ payload: { to: "all" }, children: [{ queue: "parts", payload: 1 }, { queue: "parts", payload: 2 }] });
    const parent = (await a.get<Page>("/api/jobs?queue=mail")).body.jobs.find((j) => j.id === flow.id);
    expect(parent).toMatchObject({ status: "pending", children: { total: 2, pending: 2, failed: 0 } });
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

  it("pages oldest first with next as the following page's after, with no overlap and no gap", async () => {
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
      const { status, body }: { status: number; body: Page } = await a.get<Page>(`/api/jobs?queue=bulk&order=oldest&limit=6${next ? `&after=${next}` : ""}`);
      expect(status).toBe(200);
      // The answer says its order, so a client knows which parameter its next is for.
      expect(body.order).toBe("oldest");
      pages.push(body.jobs.map((j) => j.id));
      next = body.next;
    } while (next !== null);

    expect(pages.map((p) => p.length)).toEqual([6, 6, 3]);
    expect(pages.flat()).toEqual([...all].sort((x, y) => Number(x) - Number(y)));
    // Newest first stays the default, and says so.
    expect((await a.get<Page>("/api/jobs?queue=bulk&limit=1")).body).toMatchObject({ order: "newest", next: all.at(-1) });
    // The last page of twelve says it is the last, oldest first too.
    const first = await a.get<Page>("/api/jobs?queue=bulk&order=oldest&limit=10");
    expect(first.body.next).toBe(all[9]);
    const last = await a.get<Page>(`/api/jobs?queue=bulk&order=oldest&limit=5&after=${first.body.next}`);
    expect(last.body).toMatchObject({ next: null });
    expect(last.body.jobs.map((j) => j.id)).toEqual(all.slice(10));
    // Search by id oldest first: the job, if it comes after the cursor.
    const ids = async (query: string) => (await a.get<Page>(`/api/jobs${query}`)).body.jobs.map((j) => j.id);
    expect(await ids(`?id=${all[3]}&order=oldest&after=${all[2]}`)).toEqual([all[3]]);
    expect(await ids(`?id=${all[3]}&order=oldest&after=${all[3]}`)).toEqual([]);
  });

  it("refuses a cursor of the other order with a 400 naming it, even for one job by id", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    const job = await mail.enqueue({});
    const cases: [string, string, string][] = [
      ["?order=oldest&before=5", "before", "before: pages a newest-first list; an oldest-first list (order=oldest) pages with after"],
      ["?after=5", "after", "after: pages an oldest-first list (order=oldest); a newest-first list pages with before"],
      ["?order=newest&after=5", "after", "after: pages an oldest-first list (order=oldest); a newest-first list pages with before"],
      [`?id=${job.id}&order=oldest&before=5`, "before", "before: pages a newest-first list; an oldest-first list (order=oldest) pages with after"],
      ["?order=recent", "order", "order: expected newest or oldest"],
      ["?order=oldest&after=x", "after", 'after: a job id is a positive integer such as "42"'],
    ];
    for (const [query, field, message] of cases) {
      const res = await a.get(`/api/jobs${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ error: "invalid_query", message, issues: [{ path: field }] });
    }
  });

  it("the last page says it is the last, even when it is full", async () => {
    const a = await admin();
    const bulk = a.tw.queue("bulk");
    const all = (await bulk.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ payload: n })))).map((j) => j.id).reverse();
    const first = await a.get<Page>("/api/jobs?limit=6");
    expect(first.body.jobs.map((j) => j.id)).toEqual(all.slice(0, 6));
    expect(first.body.next).toBe(all[5]);
    const second = await a.get<Page>(`/api/jobs?limit=6&before=${first.body.next}`);
    expect(second.body.jobs.map((j) => j.id)).toEqual(all.slice(6));
    expect(second.body.next).toBeNull();
    expect((await a.get<Page>("/api/jobs?limit=12")).body.next).toBeNull();
    expect((await a.get<Page>("/api/jobs?limit=11")).body.next).toBe(all[10]);
  });

  it("gives one job with its payload, attempts and last error; 404 for an id that does not exist", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ to: string }>("mail", { retry: { maxAttempts: 2, backoff: () => 60_000 }, handler: () => { throw new Error("mailbox full"); } });
    const job = await mail.enqueue({ to: "ada@example.com" }, { key: "welcome:ada" });
    await a.tw.tick();
    await a.clock.advance("1m");
    await a.tw.tick();

    const found = await a.get<JobAnswer>(`/api/jobs/${job.id}`);
    expect(found.status).toBe(200);
    expect(found.body.now).toBe(a.clock.now());
    expect(found.body.job).toMatchObject({ id: job.id, queue: "mail", payload: { to: "ada@example.com" }, payloadTruncated: false, payloadChars: JSON.stringify({ to: "ada@example.com" }).length, key: "welcome:ada", status: "failed", attempts: 2, maxAttempts: 2, result: null, progress: null, parentId: null, children: null, lease: null });
    expect(found.body.job.lastError).toContain("mailbox full");
    // Every attempt, oldest first, with its times and error.
    const start = a.clock.now() - 60_000;
    expect(found.body.job.history).toEqual([
      { attempt: 1, startedAt: start, finishedAt: start, outcome: "failed", error: expect.stringContaining("mailbox full") },
      { attempt: 2, startedAt: start + 60_000, finishedAt: start + 60_000, outcome: "failed", error: expect.stringContaining("mailbox full") },
    ]);

    const missing = await a.get(`/api/jobs/987654321`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "not_found", message: "job 987654321 does not exist (it may have been pruned by retention)" });
  });

  it("gives a succeeded job's result and a running job's progress, current attempt and lease", async () => {
    const a = await admin();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reported!: () => void;
    const progressed = new Promise<void>((resolve) => (reported = resolve));
    const reports = a.tw.queue<{ n: number }>("reports", {
      lease: "5m",
      handler: async (job, ctx) => {
        ctx.progress({ done: 1, of: 3 });
        reported();
        await gate;
        return { rows: job.payload.n };
      },
    });
    const job = await reports.enqueue({ n: 42 });
    const ticked = a.tw.tick();
    await progressed;
    // The last value is written at the latest when the job settles; until then it may lag: wait for it.
    let running = (await a.get<JobAnswer>(`/api/jobs/${job.id}`)).body.job;
    expect(running).toMatchObject({ status: "running", attempts: 1 });
    // Who holds it (this engine's worker of the queue) and until when, unless it renews the lease.
    expect(running.lease).toEqual({ workerId: `${a.tw.instanceId}/reports`, until: a.clock.now() + 5 * 60_000 });
    expect(running.history).toEqual([{ attempt: 1, startedAt: a.clock.now(), finishedAt: null, outcome: "running", error: null }]);
    for (let turn = 0; running.progress === null && turn < 200; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      running = (await a.get<JobAnswer>(`/api/jobs/${job.id}`)).body.job;
    }
    expect(running.progress).toEqual({ done: 1, of: 3 });

    release();
    await ticked;
    const done = (await a.get<JobAnswer>(`/api/jobs/${job.id}`)).body.job;
    expect(done).toMatchObject({ status: "succeeded", result: { rows: 42 }, progress: { done: 1, of: 3 }, lease: null });
    expect(done.history).toEqual([{ attempt: 1, startedAt: a.clock.now(), finishedAt: a.clock.now(), outcome: "succeeded", error: null }]);
  });
});
