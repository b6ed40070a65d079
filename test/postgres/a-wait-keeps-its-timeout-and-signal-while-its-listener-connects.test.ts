import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/core/errors.js";
import { JobWaitTimeoutError } from "../../src/queue/errors.js";
import { postgres } from "../../src/store/postgres.js";
import { DatabaseProxy } from "../support/database-proxy.js";
import { realEngines, within } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * On PostgreSQL a process's first wait opens the connection that LISTENs for jobs' ends. A server
 * that does not answer (frozen, a network stall) holds that connection's start: a wait's timeout and
 * abort signal count from the call all the same, and enqueueAndWait writes nothing it cannot hear the
 * end of. The waiting engine reaches the database through a proxy that holds the server's bytes.
 */
describe("PostgreSQL: a wait keeps its timeout and signal while its listening connection opens", () => {
  const schema = uniqueSchema();
  const proxy = new DatabaseProxy();
  const engine = realEngines({
    // The held connections get their bytes, so nothing is left hanging at the stop.
    beforeStop: () => proxy.deliver(),
    afterStop: async () => {
      await proxy.close();
      await dropSchema(schema);
    },
  });

  async function heldWaiter() {
    await proxy.open();
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const job = await producer.tw.queue("reports").enqueue({}, { delay: "1h" });
    const waiter = await engine({ store: postgres({ url: proxy.url, schema }) });
    proxy.hold();
    return { job, waiter };
  }

  it("tw.jobs.wait with a 1 s timeout rejects with JobWaitTimeoutError at its timeout, the server still silent", async () => {
    const { job, waiter } = await heldWaiter();
    const started = Date.now();
    await expect(within(waiter.tw.jobs.wait(job.id, { timeout: "1s" }), 15_000, "the wait to give up")).rejects.toBeInstanceOf(JobWaitTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("tw.jobs.wait rejects with its signal's reason once aborted, the server still silent", async () => {
    const { job, waiter } = await heldWaiter();
    const controller = new AbortController();
    const waited = waiter.tw.jobs.wait(job.id, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("the caller went away")), 200);
    await expect(within(waited, 15_000, "the wait to end at the abort")).rejects.toThrow("the caller went away");
  });

  it("enqueueAndWait with a 1 s timeout rejects at its timeout, having written nothing", async () => {
    const { waiter } = await heldWaiter();
    const reports = waiter.tw.queue("reports");
    await expect(within(reports.enqueueAndWait({ n: 1 }, { timeout: "1s" }), 15_000, "enqueueAndWait to give up")).rejects.toBeInstanceOf(StoreUnavailableError);
    proxy.deliver();
    // Only the producer's job: enqueueAndWait wrote none.
    expect((await waiter.tw.jobs.list({ queue: "reports" })).length).toBe(1);
  });
});
