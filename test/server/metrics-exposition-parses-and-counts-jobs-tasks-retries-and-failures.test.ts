import { register } from "prom-client";
import { describe, expect, it } from "vitest";
import { allStoreCases, sqliteMemoryCase } from "../support/stores.js";
import { adminFor } from "./support/admin.js";
import { parseExposition, value } from "./support/prometheus-text.js";

describe.each(allStoreCases())("GET /metrics ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("serves an exposition that parses, with jobs by queue and status, runs, retries, failures and durations", async () => {
    const a = await admin();
    const mail = a.tw.queue<{ fail?: boolean }>("mail", { retry: { maxAttempts: 2, backoff: () => 60_000 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    a.tw.queue("sms", { handler: () => {} });
    await mail.enqueueMany([{ payload: {} }, { payload: {} }, { payload: { fail: true } }]);
    await mail.enqueue({}, { delay: "1h" });
    await a.tw.tick();
    await a.clock.advance("1m");
    await a.tw.tick();

    const res = await a.get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const m = parseExposition(res.text);

    expect(m.get("tickwork_jobs")?.type).toBe("gauge");
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "succeeded" })).toBe(2);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "failed" })).toBe(1);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "pending" })).toBe(1);
    expect(value(m, "tickwork_jobs", { queue: "sms", status: "pending" })).toBe(0);
    expect(value(m, "tickwork_job_succeeded_total", { queue: "mail" })).toBe(2);
    expect(value(m, "tickwork_job_retries_total", { queue: "mail" })).toBe(1);
    expect(value(m, "tickwork_job_failed_total", { queue: "mail" })).toBe(1);
    expect(m.get("tickwork_job_duration_seconds")?.type).toBe("histogram");
    expect(value(m, "tickwork_job_duration_seconds_count", { queue: "mail", outcome: "succeeded" })).toBe(2);
    expect(value(m, "tickwork_job_duration_seconds_bucket", { queue: "mail", outcome: "succeeded", le: "+Inf" })).toBe(2);
    expect(value(m, "tickwork_job_duration_seconds_count", { queue: "mail", outcome: "retried" })).toBe(1);
    expect(value(m, "tickwork_job_duration_seconds_count", { queue: "mail", outcome: "failed" })).toBe(1);
  });

  it("counts task runs by outcome with durations, and reads failures, pauses and backoffs at scrape", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("30m") });
    a.tw.task("sweep", { every: "5m", breaker: { after: 2 }, run: () => { throw new Error("unreachable"); } });
    a.tw.task("report", { every: "5m", run: () => "ok" });
    for (let i = 0; i < 2; i++) {
      await a.clock.advance("5m");
      await a.tw.tick();
    }
    await a.tw.scheduler.pauseUntil("1h", "report");

    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_task_runs_total", { task: "prices", outcome: "backed_off" })).toBe(1);
    expect(value(m, "tickwork_task_runs_total", { task: "sweep", outcome: "failed" })).toBe(2);
    expect(value(m, "tickwork_task_runs_total", { task: "report", outcome: "succeeded" })).toBe(2);
    expect(value(m, "tickwork_task_run_duration_seconds_count", { task: "sweep", outcome: "failed" })).toBe(2);
    expect(value(m, "tickwork_task_breakers_opened_total", { task: "sweep" })).toBe(1);
    expect(value(m, "tickwork_task_consecutive_failures", { task: "sweep" })).toBe(2);
    expect(value(m, "tickwork_task_paused", { task: "sweep" })).toBe(1);
    expect(value(m, "tickwork_task_paused", { task: "report" })).toBe(1);
    expect(value(m, "tickwork_task_paused", { task: "prices" })).toBe(0);
    expect(value(m, "tickwork_task_backed_off", { task: "prices" })).toBe(1);
  });
});

describe("metrics and the log level", () => {
  const admin = adminFor(sqliteMemoryCase());
  const other = adminFor(sqliteMemoryCase());

  it("counts debug events at the default info level without writing them to the user's sink", async () => {
    const a = await admin();
    const q = a.tw.queue("mail", { handler: () => {} });
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await a.tw.tick();

    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_job_succeeded_total", { queue: "mail" })).toBe(3);
    expect(value(m, "tickwork_events_total", { event: "job.succeeded", level: "debug" })).toBe(3);
    expect(value(m, "tickwork_events_total", { event: "job.enqueued", level: "debug" })).toBe(3);
    expect(a.named("job.succeeded")).toEqual([]);
  });

  it("each app has its own registry: two engines never mix, and prom-client's global registry stays empty", async () => {
    const a = await admin();
    const b = await other();
    const qa = a.tw.queue("mail", { handler: () => {} });
    b.tw.queue("mail", { handler: () => {} });
    await qa.enqueue({});
    await a.tw.tick();

    expect(value(parseExposition((await a.get("/metrics")).text), "tickwork_job_succeeded_total", { queue: "mail" })).toBe(1);
    const ofB = parseExposition((await b.get("/metrics")).text);
    expect(value(ofB, "tickwork_job_succeeded_total", { queue: "mail" })).toBe(0);
    expect(register.getSingleMetric("tickwork_jobs")).toBeUndefined();
  });
});
