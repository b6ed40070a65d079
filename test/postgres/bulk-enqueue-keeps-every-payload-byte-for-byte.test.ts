import { describe, expect, it } from "vitest";
import { packPayloads } from "../../src/queue/store/postgres/params.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";

/** Payloads whose UTF-8 is longer than their UTF-16 length, with everything JSON escapes. */
const awkward = [
  { text: "plain ascii" },
  { text: "quotes \" and backslashes \\ and a tab \t and a newline \n" },
  { text: "café, naïve, Ærø" },
  { text: "日本語のテキスト、中文字符" },
  { text: "emoji 😀🚀 and a flag 🇩🇪" },
  { text: "a NUL \u0000 inside a string, and a lone surrogate \ud800" },
  { nested: { list: [1, 2.5, -3e21, null, true, false, "x"], empty: {}, none: [] } },
];

describe("PostgreSQL: bulk enqueue sends the payloads as one binary parameter", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("packs each payload at its own byte offset and length, growing past multi-byte text", () => {
    const rows = ["ab", "é", "😀x", "日本"].map((payload) => ({ payload, key: null, priority: 0, runAt: 0, maxAttempts: 1 }));
    const { bytes, offsets, lengths } = packPayloads(rows);
    const decoded = offsets.map((at, i) => new TextDecoder().decode(bytes.subarray(at - 1, at - 1 + lengths[i]!)));
    expect(decoded).toEqual(["ab", "é", "😀x", "日本"]);
    expect(lengths).toEqual([2, 2, 5, 6]);
    expect(bytes.length).toBe(15);
  });

  it("reads back every payload and key as enqueued, small to large, ASCII or not", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const queue = tw.queue<Record<string, unknown>>("payloads");
    const big = (n: number) => ({ n, body: "ü✓".repeat(n) });
    const items: { payload: Record<string, unknown>; key?: string }[] = [
      ...awkward.map((payload, i) => ({ payload, key: `clé-${i}-😀` })),
      { payload: big(8_000) },
      { payload: big(150_000) },
      ...Array.from({ length: 1_000 }, (_, n) => ({ payload: { n, order: { lines: [{ sku: `SKU-${n}`, name: 'a "deluxe" item' }] } } })),
    ];
    const jobs = await queue.enqueueMany(items);
    expect(jobs.map((j) => j.duplicate)).toEqual(items.map(() => false));
    for (const [i, job] of jobs.entries()) {
      const stored = await tw.jobs.get(job.id);
      expect(stored?.payload, `item ${i}`).toEqual(items[i]!.payload);
      expect(stored?.key, `item ${i}`).toBe(items[i]!.key ?? null);
    }
    // A duplicate key in a later batch finds the holder written by the binary path.
    const again = await queue.enqueueMany([{ payload: { again: true }, key: "clé-4-😀" }]);
    expect(again[0]).toMatchObject({ duplicate: true, id: jobs[4]!.id, payload: awkward[4] });
  });

  it("stores large payloads compressed with lz4 where the server has it", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const [job] = await tw.queue("large").enqueueMany([{ payload: { lines: Array.from({ length: 400 }, (_, i) => ({ line: i, sku: `SKU-${i}` })) } }]);
    const { method, lz4 } = await withPg(async (client) => {
      const [row] = (await client.query<{ method: string | null }>("SELECT pg_column_compression(payload) AS method FROM tickwork_jobs WHERE id = $1", [job!.id])).rows;
      // Debian's and most distributions' servers are built with lz4; one without keeps pglz.
      const built = (await client.query<{ ok: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) AS ok")).rows[0]!.ok;
      return { method: row!.method, lz4: built };
    }, schema);
    expect(method).toBe(lz4 ? "lz4" : "pglz");
  });
});
