import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { deferred, until } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";
import { parseExposition, value, type Family } from "./support/prometheus-text.js";

/** The samples of `name` whose labels include `labels`. */
function samples(m: Map<string, Family>, name: string, labels: Record<string, string> = {}) {
  return (m.get(name)?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe.each(allStoreCases())("GET /metrics and flow control ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("reads running jobs against globalConcurrency, groups' jobs and pauses at scrape, and counts throttles by the limit that held", async () => {
    const a = await admin();
    const gate = deferred();
    let started = 0;
    const work = a.tw.queue<string>("work", {
      concurrency: 5,
      globalConcurrency: 2,
      group: (tenant) => tenant,
      handler: async () => {
        started++;
        await gate.promise;
      },
    });
    a.tw.queue("mail", { handler: () => {} });
    await work.enqueueMany([..."aaabbc"].map((tenant) => ({ payload: tenant })));
    const ticking = a.tw.tick();
    await until(() => started === 2, "two jobs started");

    let m = parseExposition((await a.get("/metrics")).text);
    expect(m.get("tickwork_queue_running")?.type).toBe("gauge");
    expect(value(m, "tickwork_queue_running", { queue: "work" })).toBe(2);
    expect(value(m, "tickwork_queue_running", { queue: "mail" })).toBe(0);
    expect(value(m, "tickwork_queue_global_concurrency", { queue: "work" })).toBe(2);
    expect(samples(m, "tickwork_queue_global_concurrency", { queue: "mail" })).toEqual([]);
    expect(value(m, "tickwork_queue_paused", { queue: "work" })).toBe(0);
    const jobsOf = (group: string) => value(m, "tickwork_group_jobs", { queue: "work", group, state: "pending" }) + value(m, "tickwork_group_jobs", { queue: "work", group, state: "running" });
    expect([jobsOf("a"), jobsOf("b"), jobsOf("c")]).toEqual([3, 2, 1]);
    expect(samples(m, "tickwork_group_jobs", { state: "running" }).reduce((n, s) => n + s.value, 0)).toBe(2);
    expect(value(m, "tickwork_queue_throttled_total", { queue: "work", by: "globalConcurrency" })).toBe(1);

    expect((await a.post("/api/queues/work/pause")).status).toBe(200);
    m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_queue_paused", { queue: "work" })).toBe(1);

    gate.resolve();
    await ticking;
    m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_queue_throttled_total", { queue: "work", by: "paused" })).toBe(1);
    expect(value(m, "tickwork_queue_running", { queue: "work" })).toBe(0);
  });

  it("observes how long each job of a limited queue waited, and reads the shared budgets' tokens and pauses at scrape", async () => {
    const a = await admin();
    const quotes = a.tw.queue("quotes", { rateLimit: { max: 1, per: "1m", scope: "global" }, handler: () => {} });
    a.tw.limiter("prices-api", { max: 10, per: "1m", burst: 5 });
    await quotes.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await a.tw.tick();
    for (let i = 0; i < 2; i++) {
      await a.clock.advance("1m");
      await a.tw.tick();
    }

    let m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_job_succeeded_total", { queue: "quotes" })).toBe(3);
    expect(m.get("tickwork_job_limit_wait_seconds")?.type).toBe("histogram");
    expect(value(m, "tickwork_job_limit_wait_seconds_count", { queue: "quotes" })).toBe(3);
    expect(value(m, "tickwork_job_limit_wait_seconds_sum", { queue: "quotes" })).toBe(180);
    expect(value(m, "tickwork_job_limit_wait_seconds_bucket", { queue: "quotes", le: "0.01" })).toBe(1);
    expect(value(m, "tickwork_job_limit_wait_seconds_bucket", { queue: "quotes", le: "60" })).toBe(2);
    expect(value(m, "tickwork_job_limit_wait_seconds_bucket", { queue: "quotes", le: "300" })).toBe(3);
    // Held after the first and second starts; after the third nothing is due, so nothing is held.
    expect(value(m, "tickwork_queue_throttled_total", { queue: "quotes", by: "rateLimit" })).toBe(2);
    expect(value(m, "tickwork_limit_tokens", { bucket: "queue:quotes" })).toBe(0);
    expect(value(m, "tickwork_limit_tokens", { bucket: "limiter:prices-api" })).toBe(5);
    expect(value(m, "tickwork_limit_paused", { bucket: "limiter:prices-api" })).toBe(0);
    expect(samples(m, "tickwork_limiter_paused_total")).toEqual([{ name: "tickwork_limiter_paused_total", labels: { limiter: "prices-api" }, value: 0 }]);

    expect((await a.post("/api/limiters/prices-api/pause", { for: "90s" })).status).toBe(200);
    m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_limit_paused", { bucket: "limiter:prices-api" })).toBe(1);
    expect(value(m, "tickwork_limit_tokens", { bucket: "limiter:prices-api" })).toBe(0);
    expect(value(m, "tickwork_limiter_paused_total", { limiter: "prices-api" })).toBe(1);
  });

  it("reads the jobs a worker claimed and has not started apart from the running ones", async () => {
    const a = await admin();
    a.tw.queue("work", {});
    await a.tw.queue("work").enqueueMany([0, 1, 2, 3].map((n) => ({ payload: { n } })));
    const now = a.clock.now();
    // A worker elsewhere claimed three, started one and holds two to start next.
    await a.tw.store.queue.claimDue({ queue: "work", limit: 3, start: 1, now, leaseUntil: now + 30_000, workerId: "elsewhere/work" });
    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_queue_running", { queue: "work" })).toBe(1);
    expect(value(m, "tickwork_queue_held", { queue: "work" })).toBe(2);
    expect(value(m, "tickwork_jobs", { queue: "work", status: "running" })).toBe(1);
    expect(value(m, "tickwork_jobs", { queue: "work", status: "pending" })).toBe(1);
  });

  it("counts a queue held back by its rateLimit in this process as throttled by rateLimit, once per hold", async () => {
    const a = await admin();
    const ran: number[] = [];
    const quotes = a.tw.queue<number>("quotes", { rateLimit: { max: 1, per: "1m" }, handler: (job) => void ran.push(job.payload) });
    await quotes.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await a.tw.tick();
    await a.tw.tick();
    expect(ran).toEqual([1]);
    let m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_queue_throttled_total", { queue: "quotes", by: "rateLimit" })).toBe(1);

    await a.clock.advance("1m");
    await a.tw.tick();
    expect(ran).toEqual([1, 2]);
    m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_queue_throttled_total", { queue: "quotes", by: "rateLimit" })).toBe(2);
    expect(a.named("queue.throttled")).toEqual([
      expect.objectContaining({ queue: "quotes", by: "rateLimit", started: 0 }),
      expect.objectContaining({ queue: "quotes", by: "rateLimit", started: 0 }),
    ]);
  });

  it.each([false, true])("a queue under a limiter, a global rateLimit and globalConcurrency (grouped: %s) counts each hold under its own by", async (grouped) => {
    const a = await admin();
    const api = a.tw.limiter("api", { max: 4, per: "1m", burst: 2 });
    const ran: number[] = [];
    const quotes = a.tw.queue<number>("quotes", {
      concurrency: 2,
      globalConcurrency: 2,
      rateLimit: { max: 2, per: "1m", scope: "global" },
      limiter: api,
      ...(grouped ? { group: true } : {}),
      handler: (job) => void ran.push(job.payload),
    });
    await quotes.enqueueMany([1, 2, 3].map((n) => ({ payload: n, ...(grouped ? { group: `g${n}` } : {}) })));
    const throttled = async (by: string) => value(parseExposition((await a.get("/metrics")).text), "tickwork_queue_throttled_total", { queue: "quotes", by });

    // The limiter spent elsewhere: the queue's own budget has a token, the limiter none.
    expect(await api.tryAcquire(2)).toBe(true);
    expect(await a.tw.tick()).toMatchObject({ ran: 0, nextWakeAt: a.clock.now() + 15_000 });
    expect(await throttled("limiter")).toBe(1);
    expect(a.tw.status().queues[0]).toMatchObject({ heldBy: "limiter" });

    // 30 s on, the limiter has 2 tokens and the queue's budget 1: the queue's own rateLimit holds.
    await a.clock.advance("30s");
    expect(await a.tw.tick()).toMatchObject({ ran: 1, nextWakeAt: a.clock.now() + 30_000 });
    expect(await throttled("rateLimit")).toBe(1);

    // Another process holds both slots of the globalConcurrency.
    await a.clock.advance("30s");
    const now = a.clock.now();
    await a.tw.store.queue.holdSlots({ queue: "quotes", workerId: "elsewhere", want: 2, cap: 2, now, until: now + 60_000 });
    expect((await a.tw.tick()).ran).toBe(0);
    expect(await throttled("globalConcurrency")).toBe(1);
    expect(ran).toEqual([1]);
    expect(await throttled("limiter")).toBe(1);
    expect(a.named("queue.throttled").map((e) => e.by)).toEqual(["limiter", "rateLimit", "globalConcurrency"]);
  });

  it("exports the 20 busiest groups of a queue and no more", async () => {
    const a = await admin();
    const work = a.tw.queue("work", { group: true });
    // Group g01 has 1 job, g02 2 jobs ... g25 25 jobs: the busiest 20 are g06 to g25.
    const groups = Array.from({ length: 25 }, (_, i) => `g${String(i + 1).padStart(2, "0")}`);
    await work.enqueueMany(groups.flatMap((group, i) => Array.from({ length: i + 1 }, () => ({ payload: {}, group }))));

    const m = parseExposition((await a.get("/metrics")).text);
    const pending = samples(m, "tickwork_group_jobs", { queue: "work", state: "pending" });
    expect(pending.map((s) => s.labels.group).sort()).toEqual(groups.slice(5));
    expect(pending.find((s) => s.labels.group === "g25")?.value).toBe(25);
    expect(samples(m, "tickwork_group_jobs", { queue: "work" })).toHaveLength(40);
  });
});
