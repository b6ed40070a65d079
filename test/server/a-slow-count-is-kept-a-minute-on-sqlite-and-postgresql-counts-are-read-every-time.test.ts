import { describe, expect, it } from "vitest";
import { createTickwork } from "../../src/index.js";
import { fakeClock } from "../../src/testing/index.js";
import { countsOf } from "../../src/server/finished-counts.js";
import { sqlite } from "../../src/store/sqlite.js";
import { postgresCase, wrapQueueOperation } from "../support/stores.js";

/**
 * The admin server's counts (dashboard, API, /metrics). SQLite counts finished jobs by reading them:
 * on a table of millions that takes a second, so once a count is slow its result is kept for a minute
 * of the engine's clock. Here the real count is made slow by holding it 40 ms; the table is real.
 */
describe("the admin server's job counts", () => {
  async function engineWithCountsTaking(ms: number, store = sqlite(":memory:")) {
    let reads = 0;
    const slowed = wrapQueueOperation(store, "countByStatus", (real) => async (params) => {
      reads++;
      if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
      return real(params);
    });
    const clock = fakeClock("2026-01-01T00:00:00Z");
    const tw = await createTickwork({ store: slowed, clock, logger: () => {}, handleSignals: false });
    return { tw, clock, reads: () => reads };
  }

  it("on SQLite, a quick count is taken again at every read", async () => {
    const { tw, reads } = await engineWithCountsTaking(0);
    try {
      const q = tw.queue("mail", { handler: () => {} });
      await q.enqueue({});
      await countsOf(tw).get();
      await tw.tick();
      expect(await countsOf(tw).get()).toEqual([{ queue: "mail", counts: { pending: 0, running: 0, succeeded: 1, failed: 0, cancelled: 0 } }]);
      expect(reads()).toBe(2);
    } finally {
      await tw.stop();
    }
  });

  it("on SQLite, a slow count is kept for a minute of the engine's clock, then answers once more while the next is taken behind it; readers together share one", async () => {
    const { tw, clock, reads } = await engineWithCountsTaking(40);
    try {
      const q = tw.queue("mail", { handler: () => {} });
      await q.enqueue({});
      const [a, b] = await Promise.all([countsOf(tw).get(), countsOf(tw).get()]);
      expect(a).toEqual(b);
      expect(reads()).toBe(1);
      await tw.tick();
      expect((await countsOf(tw).get())[0]!.counts).toMatchObject({ pending: 1, succeeded: 0 }); // kept
      expect(reads()).toBe(1);
      await clock.advance("1m");
      // A minute on: the kept count answers at once, and the next count starts behind it.
      expect((await countsOf(tw).get())[0]!.counts).toMatchObject({ pending: 1, succeeded: 0 });
      expect(reads()).toBe(2);
      await expect.poll(async () => (await countsOf(tw).get())[0]!.counts).toMatchObject({ pending: 0, succeeded: 1 });
      expect(reads()).toBe(2);
    } finally {
      await tw.stop();
    }
  });

  it("on PostgreSQL, whose writes keep the counts, every read reads them, slow or not", async () => {
    const pg = postgresCase();
    const { tw, reads } = await engineWithCountsTaking(40, pg.make());
    try {
      const q = tw.queue("mail", { handler: () => {} });
      await q.enqueue({});
      await countsOf(tw).get();
      await tw.tick();
      expect((await countsOf(tw).get())[0]!.counts).toMatchObject({ pending: 0, succeeded: 1 });
      expect(reads()).toBe(2);
    } finally {
      await tw.stop();
      await pg.cleanup();
    }
  });
});
