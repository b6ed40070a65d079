import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

const ENGINES = 3;
const CONCURRENCY = 5;
const JOBS = 300;

describe("PostgreSQL: many workers on one schema", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it(`run each of ${JOBS} jobs exactly once, ${ENGINES} engines with concurrency ${CONCURRENCY} each`, async () => {
    const executions = new Map<string, string[]>();
    const perEngine = new Map<string, { ran: number; inFlight: number; maxInFlight: number }>();
    for (let i = 0; i < ENGINES; i++) {
      const name = `worker-${i}`;
      const stats = { ran: 0, inFlight: 0, maxInFlight: 0 };
      perEngine.set(name, stats);
      const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }), instanceId: name, logLevel: "info" });
      tw.queue("thumbnails", {
        concurrency: CONCURRENCY,
        handler: async (job) => {
          executions.set(job.id, [...(executions.get(job.id) ?? []), name]);
          stats.ran++;
          stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
          await delay(2); // the job's own work, so the engines' claims interleave
          stats.inFlight--;
        },
      });
      await tw.start();
    }

    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const jobs = await producer.tw.queue("thumbnails").enqueueMany(Array.from({ length: JOBS }, (_, i) => ({ payload: { image: i } })));

    const counts = await eventually(async () => {
      const [row] = await producer.tw.jobs.counts("thumbnails");
      return row?.counts.succeeded === JOBS && row.counts;
    }, `all ${JOBS} jobs to succeed`, 30_000);
    expect(counts).toMatchObject({ pending: 0, running: 0, succeeded: JOBS, failed: 0 });

    expect([...executions.keys()].sort()).toEqual(jobs.map((j) => j.id).sort());
    const twice = [...executions].filter(([, by]) => by.length !== 1);
    expect(twice).toEqual([]);
    for (const [name, stats] of perEngine) {
      expect(stats.ran, `${name} ran jobs`).toBeGreaterThan(0);
      expect(stats.maxInFlight, `${name} kept to its concurrency`).toBeLessThanOrEqual(CONCURRENCY);
    }
    expect([...perEngine.values()].reduce((n, s) => n + s.ran, 0)).toBe(JOBS);
  });
});
