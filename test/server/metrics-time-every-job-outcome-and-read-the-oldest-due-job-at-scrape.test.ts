import { describe, expect, it } from "vitest";
import { SnoozeError } from "../../src/index.js";
import { allStoreCases } from "../support/stores.js";
import { deferred, until } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";
import { parseExposition, value } from "./support/prometheus-text.js";

describe.each(allStoreCases())("GET /metrics: job outcomes, due jobs and counts ($name)", (storeCase) => {
  const admin = adminFor(storeCase);
  const scrape = async (a: { get(path: string): Promise<{ text: string }> }) => parseExposition((await a.get("/metrics")).text);

  it("times every attempt by its outcome, succeeded, retried, snoozed, failed or refused, from its start", async () => {
    const a = await admin();
    const gate = deferred();
    let started = 0;
    const mail = a.tw.queue<string>("mail", {
      concurrency: 5,
      retry: { maxAttempts: 2, backoff: () => 60_000 },
      handler: async (job) => {
        started++;
        await gate.promise;
        if (job.payload === "bounce") throw new Error("bounced");
        if (job.payload === "later") throw new SnoozeError("1h");
      },
    });
    const [, , cancelled] = await mail.enqueueMany([{ payload: "ok" }, { payload: "bounce" }, { payload: "ok" }, { payload: "later" }]);
    const ticking = a.tw.tick();
    await until(() => started === 4, "four attempts started");
    await a.clock.advance("2s");
    // Cancelled while its handler runs: the handler's success is refused.
    await a.tw.jobs.cancel(cancelled!.id);
    gate.resolve();
    await ticking;
    await a.clock.advance("1m");
    await a.tw.tick();

    const m = await scrape(a);
    const attempts = (outcome: string) => [value(m, "tickwork_job_duration_seconds_count", { queue: "mail", outcome }), value(m, "tickwork_job_duration_seconds_sum", { queue: "mail", outcome })];
    expect(attempts("succeeded")).toEqual([1, 2]);
    expect(attempts("retried")).toEqual([1, 2]);
    expect(attempts("refused")).toEqual([1, 2]);
    expect(attempts("snoozed")).toEqual([1, 2]);
    // The second attempt of the bounced job failed as soon as it started.
    expect(attempts("failed")).toEqual([1, 0]);
    expect(value(m, "tickwork_job_duration_seconds_bucket", { queue: "mail", outcome: "retried", le: "1" })).toBe(0);
    expect(value(m, "tickwork_job_duration_seconds_bucket", { queue: "mail", outcome: "retried", le: "2.5" })).toBe(1);
    expect(value(m, "tickwork_job_succeeded_total", { queue: "mail" })).toBe(1);
    expect(value(m, "tickwork_job_retries_total", { queue: "mail" })).toBe(1);
    expect(value(m, "tickwork_job_failed_total", { queue: "mail" })).toBe(1);
  });

  it("reads how long the oldest due job of each queue has been due, leaving out jobs scheduled ahead", async () => {
    const a = await admin();
    const reports = a.tw.queue("reports");
    const later = a.tw.queue("later");
    a.tw.queue("idle");
    await reports.enqueue({});
    await a.clock.advance("90s");
    await reports.enqueue({});
    await reports.enqueue({}, { delay: "1h" });
    await later.enqueue({}, { delay: "1h" });

    let m = await scrape(a);
    expect(m.get("tickwork_job_oldest_due_age_seconds")?.type).toBe("gauge");
    expect(value(m, "tickwork_job_oldest_due_age_seconds", { queue: "reports" })).toBe(90);
    expect(value(m, "tickwork_job_oldest_due_age_seconds", { queue: "later" })).toBe(0);
    expect(value(m, "tickwork_job_oldest_due_age_seconds", { queue: "idle" })).toBe(0);
    expect(value(m, "tickwork_jobs", { queue: "reports", status: "pending" })).toBe(3);
    // The pending jobs split: the backlog (due) apart from jobs scheduled ahead.
    expect(value(m, "tickwork_job_pending", { queue: "reports", state: "due" })).toBe(2);
    expect(value(m, "tickwork_job_pending", { queue: "reports", state: "scheduled" })).toBe(1);
    expect(value(m, "tickwork_job_pending", { queue: "later", state: "due" })).toBe(0);
    expect(value(m, "tickwork_job_pending", { queue: "later", state: "scheduled" })).toBe(1);
    expect(value(m, "tickwork_job_pending", { queue: "idle", state: "due" })).toBe(0);

    await a.clock.advance("30s");
    m = await scrape(a);
    expect(value(m, "tickwork_job_oldest_due_age_seconds", { queue: "reports" })).toBe(120);
  });

  it("reads every status's count at each scrape, finished ones included", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    await mail.enqueue({});

    let m = await scrape(a);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "pending" })).toBe(1);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "succeeded" })).toBe(0);

    await a.tw.tick();
    m = await scrape(a);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "pending" })).toBe(0);
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "running" })).toBe(0);
    expect(value(m, "tickwork_job_succeeded_total", { queue: "mail" })).toBe(1);
    // Kept by the writes on PostgreSQL; counted quickly on SQLite while its table is small: the next
    // scrape has the job that just finished.
    expect(value(m, "tickwork_jobs", { queue: "mail", status: "succeeded" })).toBe(1);
  });

  it("tells a task's open breaker apart from a pause by hand", async () => {
    const a = await admin();
    a.tw.task("sweep", { every: "5m", breaker: { after: 2 }, run: () => { throw new Error("unreachable"); } });
    a.tw.task("report", { every: "5m", run: () => "ok" });
    for (let i = 0; i < 2; i++) {
      await a.clock.advance("5m");
      await a.tw.tick();
    }
    await a.tw.scheduler.pauseUntil("1h", "report");

    const m = await scrape(a);
    expect(value(m, "tickwork_task_paused", { task: "sweep" })).toBe(1);
    expect(value(m, "tickwork_task_breaker_open", { task: "sweep" })).toBe(1);
    expect(value(m, "tickwork_task_paused", { task: "report" })).toBe(1);
    expect(value(m, "tickwork_task_breaker_open", { task: "report" })).toBe(0);
  });
});
