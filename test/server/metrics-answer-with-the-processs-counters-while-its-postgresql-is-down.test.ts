import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ownCluster, type PgServer } from "../../chaos/cluster.js";
import { serve, type Serving } from "../../src/server/index.js";
import { postgres } from "../../src/store/postgres.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { eventually } from "../support/real-time.js";
import { TOKEN, requestJson } from "./support/admin.js";
import { parseExposition, type Family } from "./support/prometheus-text.js";

// A PostgreSQL cluster of the test's own (initdb, then stopped and started again): never the
// machine's shared server.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** The samples of `family` whose labels include `labels`. */
function samples(m: Map<string, Family>, family: string, labels: Record<string, string> = {}) {
  return (m.get(family)?.samples ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe("GET /metrics while the engine's PostgreSQL is down", () => {
  let cluster: PgServer;
  let tw: Tickwork;
  let serving: Serving;
  const scrape = async () => {
    const answer = await requestJson(serving.url, "GET", "/metrics");
    expect(answer.status).toBe(200);
    return parseExposition(answer.text);
  };

  beforeAll(async () => {
    cluster = await ownCluster(54460, () => {});
    tw = await createTickwork({ store: postgres({ url: cluster.appUrl("metrics-outage") }), logger: () => {}, handleSignals: false, pollInterval: "100ms" });
    const mail = tw.queue("mail", { handler: () => {} });
    await mail.enqueue({ to: "ada@example.com" }, { delay: "1h" });
    serving = await serve(tw, { port: 0, token: TOKEN });
    await tw.start();
  });
  afterAll(async () => {
    await serving?.close();
    await tw?.stop();
    await cluster?.close();
  });

  it("answers with the process's own counters and leaves out the gauges it could not read, then reads them again once it is back", async () => {
    const before = await scrape();
    expect(samples(before, "tickwork_metrics_store_read")[0]?.value).toBe(1);
    expect(samples(before, "tickwork_job_pending", { queue: "mail", state: "scheduled" })[0]?.value).toBe(1);

    await cluster.stopImmediate();
    // The workers' claims fail and are counted; the scrape answers all the same.
    const during = await eventually(async () => {
      const m = await scrape();
      const errors = samples(m, "tickwork_store_errors_total").reduce((sum, s) => sum + s.value, 0);
      return errors > 0 && m;
    }, "a scrape that counts the store's errors", 60_000);
    expect(samples(during, "tickwork_metrics_store_read")[0]?.value).toBe(0);
    for (const gauge of ["tickwork_jobs", "tickwork_job_pending", "tickwork_job_oldest_due_age_seconds", "tickwork_queue_running"]) {
      expect(samples(during, gauge), `${gauge} while the store is down`).toEqual([]);
    }
    expect(samples(during, "tickwork_job_succeeded_total", { queue: "mail" })[0]?.value).toBe(0);

    await cluster.start();
    const after = await eventually(async () => {
      const m = await scrape();
      return samples(m, "tickwork_metrics_store_read")[0]?.value === 1 && m;
    }, "a scrape that reads the store again", 60_000);
    expect(samples(after, "tickwork_job_pending", { queue: "mail", state: "scheduled" })[0]?.value).toBe(1);
  });
});
