import { describe, expect, it } from "vitest";
import { createTickwork } from "../../src/index.js";
import { fakeClock } from "../../src/testing/index.js";
import { countsOf } from "../../src/server/shared-counts.js";
import { allStoreCases, wrapQueueOperation } from "../support/stores.js";

/**
 * The admin server's counts (dashboard, API, /metrics) come from counters every store keeps as it
 * writes: each read takes a count, so it sees every write before it, and readers that arrive while a
 * count is on its way share it. The count is held 40 ms here so that readers overlap.
 */
describe.each(allStoreCases())("the admin server's job counts ($name)", (storeCase) => {
  async function engineWithCountsTaking(ms: number) {
    let reads = 0;
    const slowed = wrapQueueOperation(storeCase.make(), "countByStatus", (real) => async (params) => {
      reads++;
      await new Promise((resolve) => setTimeout(resolve, ms));
      return real(params);
    });
    const tw = await createTickwork({ store: slowed, clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {}, handleSignals: false });
    return { tw, reads: () => reads };
  }

  it("readers together share one count; a read after a write takes a new one and sees it", async () => {
    const { tw, reads } = await engineWithCountsTaking(40);
    try {
      const q = tw.queue("mail", { handler: () => {} });
      await q.enqueue({});
      const [a, b] = await Promise.all([countsOf(tw).get(), countsOf(tw).get()]);
      expect(a).toEqual(b);
      expect(a[0]!.counts).toMatchObject({ pending: 1, succeeded: 0 });
      expect(reads()).toBe(1);
      await tw.tick();
      expect((await countsOf(tw).get())[0]!.counts).toMatchObject({ pending: 0, succeeded: 1 });
      expect(reads()).toBe(2);
    } finally {
      await tw.stop();
      await storeCase.cleanup();
    }
  });
});
