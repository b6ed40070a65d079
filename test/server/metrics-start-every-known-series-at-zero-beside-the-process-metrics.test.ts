import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import { prometheusMetrics, serve, type ServeOptions } from "../../src/server/index.js";
import { engineFor } from "../support/queue-fixtures.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { TOKEN, adminFor } from "./support/admin.js";
import { parseExposition, value, type Family } from "./support/prometheus-text.js";

const JOB_OUTCOMES = ["succeeded", "retried", "snoozed", "failed", "refused"];
const TASK_OUTCOMES = ["succeeded", "failed", "backed_off", "refused"];

/** A family's samples named `name` (a histogram's `_count`, say) whose labels include `labels`. */
function samples(m: Map<string, Family>, family: string, name = family, labels: Record<string, string> = {}) {
  return (m.get(family)?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe("GET /metrics before anything happened", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("has every counter and histogram at zero for each declared queue, task, delivery, fan-out and limiter", async () => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    a.tw.queue("quotes", { rateLimit: { max: 1, per: "1m", scope: "global" }, handler: () => {} });
    a.tw.task("report", { every: "5m", run: () => "ok" });
    a.tw.delivery("hooks", { send: () => {} });
    a.tw.fanout("symbols", { groups: { collectors: { targets: ["collector-1"] } }, send: () => {} });
    a.tw.limiter("prices-api", { max: 10, per: "1m" });

    const m = parseExposition((await a.get("/metrics")).text);
    for (const queue of ["mail", "quotes"]) {
      for (const counter of ["tickwork_job_succeeded_total", "tickwork_job_retries_total", "tickwork_job_failed_total", "tickwork_job_leases_expired_total"]) {
        expect(value(m, counter, { queue }), `${counter}{queue="${queue}"}`).toBe(0);
      }
      for (const outcome of JOB_OUTCOMES) expect(value(m, "tickwork_job_duration_seconds_count", { queue, outcome })).toBe(0);
      expect(value(m, "tickwork_job_wait_seconds_count", { queue })).toBe(0);
      expect(value(m, "tickwork_queue_throttled_total", { queue, by: "paused" })).toBe(0);
    }
    // The limits' own series only where a queue has limits.
    expect(value(m, "tickwork_job_limit_wait_seconds_count", { queue: "quotes" })).toBe(0);
    expect(value(m, "tickwork_queue_throttled_total", { queue: "quotes", by: "rateLimit" })).toBe(0);
    expect(samples(m, "tickwork_job_limit_wait_seconds", "tickwork_job_limit_wait_seconds_count", { queue: "mail" })).toEqual([]);
    for (const outcome of TASK_OUTCOMES) {
      expect(value(m, "tickwork_task_runs_total", { task: "report", outcome })).toBe(0);
      expect(value(m, "tickwork_task_run_duration_seconds_count", { task: "report", outcome })).toBe(0);
    }
    expect(value(m, "tickwork_task_breakers_opened_total", { task: "report" })).toBe(0);
    for (const counter of ["tickwork_delivery_items_emitted_total", "tickwork_delivery_retries_total", "tickwork_delivery_dropped_total", "tickwork_delivery_budget_exhausted_total"]) {
      expect(value(m, counter, { delivery: "hooks" }), counter).toBe(0);
    }
    for (const outcome of ["delivered", "failed", "dropped"]) expect(value(m, "tickwork_delivery_sends_total", { delivery: "hooks", outcome })).toBe(0);
    expect(value(m, "tickwork_fanout_push_failures_total", { fanout: "symbols" })).toBe(0);
    expect(value(m, "tickwork_fanout_retries_total", { fanout: "symbols" })).toBe(0);
    expect(value(m, "tickwork_limiter_paused_total", { limiter: "prices-api" })).toBe(0);
    expect(value(m, "tickwork_store_errors_total", { operation: "claim" })).toBe(0);

    // No counter or histogram of the engine is left without series (gauges have series only for what
    // applies: a delivery's last pass, a queue's globalConcurrency, a grouped queue's groups).
    const empty = [...m.values()].filter((f) => f.name.startsWith("tickwork_") && f.type !== "gauge" && f.samples.length === 0).map((f) => f.name);
    expect(empty).toEqual([]);
  });

  it("keeps what was observed when a scrape creates the zero series again", async () => {
    const a = await admin();
    a.tw.task("report", { every: "5m", run: () => "ok" });
    await a.clock.advance("5m");
    await a.tw.tick();
    for (let i = 0; i < 2; i++) {
      const m = parseExposition((await a.get("/metrics")).text);
      expect(value(m, "tickwork_task_run_duration_seconds_count", { task: "report", outcome: "succeeded" })).toBe(1);
      expect(value(m, "tickwork_task_runs_total", { task: "report", outcome: "succeeded" })).toBe(1);
    }
  });

  it("observes each job's wait from its run time to its start, for every queue", async () => {
    const a = await admin();
    const mail = a.tw.queue("mail", { handler: () => {} });
    await mail.enqueue({});
    await mail.enqueue({}, { delay: "30s" });
    await a.clock.advance("90s");
    await a.tw.tick();

    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_job_wait_seconds_count", { queue: "mail" })).toBe(2);
    // One waited 90 s past its run time, the other 60 s.
    expect(value(m, "tickwork_job_wait_seconds_sum", { queue: "mail" })).toBe(150);
  });
});

describe("the process's default metrics", () => {
  const admin = adminFor(sqliteMemoryCase());
  const engine = engineFor(sqliteMemoryCase());

  it("serves prom-client's process and Node.js metrics beside the engine's, unless defaultMetrics: false", async () => {
    let a = await admin();
    let m = parseExposition((await a.get("/metrics")).text);
    expect(m.get("process_cpu_user_seconds_total")?.type).toBe("counter");
    expect(m.get("process_resident_memory_bytes")?.samples[0]?.value).toBeGreaterThan(0);
    expect(m.get("nodejs_eventloop_lag_seconds")?.type).toBe("gauge");
    expect(m.get("nodejs_heap_size_used_bytes")?.samples[0]?.value).toBeGreaterThan(0);
    expect(m.get("tickwork_jobs")?.type).toBe("gauge");

    await a.close();
    a = await admin({ server: { metrics: { defaultMetrics: false } } });
    m = parseExposition((await a.get("/metrics")).text);
    expect([...m.keys()].filter((name) => !name.startsWith("tickwork_"))).toEqual([]);
    expect(m.get("tickwork_jobs")?.type).toBe("gauge");
  });

  it("refuses bad metrics options with an InvalidInputError naming the field, before listening", async () => {
    const e = await engine();
    const bad: [unknown, RegExp][] = [
      [{ defaultMetrics: "no" }, /adminApp: metrics: defaultMetrics: expected true or false/],
      [{ defaultMetric: false }, /adminApp: metrics: .*defaultMetric/],
      ["yes", /adminApp: metrics must be true, false or \{ defaultMetrics \}, got "yes"/],
    ];
    for (const [metrics, message] of bad) {
      await expect(serve(e.tw, { port: 0, token: TOKEN, metrics } as ServeOptions)).rejects.toThrow(message);
      await expect(serve(e.tw, { port: 0, token: TOKEN, metrics } as ServeOptions)).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(() => prometheusMetrics(e.tw, { defaultMetrics: 1 } as never)).toThrow(/prometheusMetrics: defaultMetrics: expected true or false \(got 1\)/);
    expect(e.named("server.listening")).toEqual([]);
  });
});
