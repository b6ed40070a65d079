import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { postgres } from "../../src/store/postgres.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { START, T0, SECOND, until } from "../support/queue-fixtures.js";

describe("PostgreSQL: rate-limited workers in several engines sharing the store", () => {
  const schema = uniqueSchema();
  const clock = fakeClock(START);
  const engines: Tickwork[] = [];

  afterEach(async () => {
    const stopped = Promise.all(engines.splice(0).map((tw) => tw.stop()));
    await clock.advance("1h");
    await stopped;
    await dropSchema(schema);
  });

  it('three engines with rateLimit { max: 5, per: "1s" } each run all 40 pending jobs, 15 per window', async () => {
    const startedAt: number[] = [];
    const queues = [];
    for (let i = 0; i < 3; i++) {
      // An hour-long poll and rescue interval: only the wake-up armed for the window's end starts the next jobs.
      const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema, max: 3 }), clock, logger: () => {}, handleSignals: false, pollInterval: "1h", rescueInterval: "1h" });
      engines.push(tw);
      queues.push(tw.queue("api", { concurrency: 4, rateLimit: { max: 5, per: "1s" }, handler: () => void startedAt.push(clock.now()) }));
    }
    await queues[0]!.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ payload: { n } })));

    for (const tw of engines) await tw.start();
    const expected = [15, 30, 40];
    for (const [window, total] of expected.entries()) {
      await until(() => startedAt.length === total, `window ${window + 1}: ${total} jobs started (${startedAt.length} so far)`);
      if (window < expected.length - 1) await clock.advance("1s");
    }

    expect(startedAt.filter((at) => at === T0)).toHaveLength(15);
    expect(startedAt.filter((at) => at === T0 + SECOND)).toHaveLength(15);
    expect(startedAt.filter((at) => at === T0 + 2 * SECOND)).toHaveLength(10);
    let pending = -1;
    for (let i = 0; i < 200 && pending !== 0; i++) pending = (await engines[0]!.jobs.counts("api"))[0]!.counts.pending;
    expect(pending).toBe(0);
  });
});
