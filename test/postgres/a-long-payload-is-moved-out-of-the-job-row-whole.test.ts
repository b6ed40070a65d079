import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";

/**
 * PostgreSQL toasts a row over about 2 KB: it compresses its long values, and moves them out of the
 * row while the row is longer than the table's target. At the default target (2 KB) a payload that
 * compresses well stayed in the row, and each claim and outcome (a new version of the row) copied
 * it. The jobs table's target is the minimum: such a payload goes to the TOAST table once, at insert,
 * and the versions a claim and an outcome write point to it.
 */

/** An order with repetitive lines, as the benchmarks' 2 KB payloads: lz4 or pglz shrink it a lot. */
function order(n: number) {
  return { n, lines: Array.from({ length: 34 }, (_, k) => ({ sku: `SKU-${1000 + k}`, name: `Item ${k} "deluxe" edition`, qty: (k % 5) + 1 })) };
}

describe("PostgreSQL: a long payload is moved out of the job's row whole", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("a compressible 2 KB payload is toasted once at insert, and a claim and an outcome point to it without copying it", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const seen: unknown[] = [];
    const q = tw.queue<{ n: number }>("orders", { handler: (job) => void seen.push(job.payload) });
    const long = await q.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ payload: order(n) })));
    await q.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ payload: { n } })));
    expect(JSON.stringify(order(0)).length).toBeGreaterThan(2_000);

    /** Distinct values in the jobs table's TOAST table: one per payload moved out of a row. */
    const toasted = () => withPg(async (client) => {
      const { rows: [rel] } = await client.query<{ toast: string }>(`SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'tickwork_jobs'::regclass`);
      const { rows: [count] } = await client.query<{ n: string }>(`SELECT count(DISTINCT chunk_id) AS n FROM ${rel!.toast}`);
      return Number(count!.n);
    }, schema);

    expect(await toasted()).toBe(5);
    while ((await tw.tick()).ran > 0);
    expect(seen).toHaveLength(10);
    expect(seen).toEqual(expect.arrayContaining(long.map((j) => j.payload)));
    // Claimed and settled, each job's row has two new versions; its payload is still the one value.
    expect(await toasted()).toBe(5);
  });
});
