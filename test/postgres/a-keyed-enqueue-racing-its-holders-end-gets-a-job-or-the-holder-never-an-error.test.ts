import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { realEngines } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * A keyed enqueue whose key a live job holds returns that job (`duplicate: true`); otherwise it writes
 * a new one. On PostgreSQL the insert and the read of the holder are two statements: a holder that
 * ends between them frees the key, and the enqueue tries the key again instead of failing. Producers
 * in four engines race one key while a worker ends its jobs as fast as it can.
 */
describe("PostgreSQL: a keyed enqueue racing the end of the key's holder", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("every one of 4 × 60 enqueues of one key gets a new job or the live holder, none an error", async () => {
    const worker = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    worker.tw.queue("sync", { concurrency: 4, handler: () => {} });
    await worker.tw.start();
    const producers = await Promise.all(Array.from({ length: 4 }, () => engine({ store: postgres({ url: DATABASE_URL, schema }) })));

    const answers = await Promise.all(
      producers.map(async ({ tw }) => {
        const sync = tw.queue("sync");
        const mine: { outcome: "new" | "duplicate" | "error"; error?: string; sameKey?: boolean }[] = [];
        for (let n = 0; n < 60; n++) {
          try {
            const job = await sync.enqueue({ n }, { key: "s1" });
            mine.push({ outcome: job.duplicate ? "duplicate" : "new", sameKey: job.key === "s1" });
          } catch (error) {
            mine.push({ outcome: "error", error: String(error) });
          }
        }
        return mine;
      }),
    );
    const all = answers.flat();
    expect(all.filter((a) => a.outcome === "error")).toEqual([]);
    expect(all.every((a) => a.sameKey)).toBe(true);
    expect(all.filter((a) => a.outcome === "new").length).toBeGreaterThan(1);
  });
});
