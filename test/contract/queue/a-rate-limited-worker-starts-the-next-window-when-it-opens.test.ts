import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor, until } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a rate-limited queue run by tw.start() goes on window after window ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  for (const concurrency of [1, 40]) {
    it(`rateLimit { max: 5, per: "1s" }, concurrency ${concurrency}, 20 pending jobs: 5 start in each window until all have run`, async () => {
      // An hour-long poll and rescue interval: only a wake-up armed for the window's end can start the next five.
      const { tw, clock } = await engine({ pollInterval: "1h", rescueInterval: "1h" });
      const startedAt: number[] = [];
      const q = tw.queue("api", { concurrency, rateLimit: { max: 5, per: "1s" }, handler: () => void startedAt.push(clock.now()) });
      await q.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ payload: { n } })));

      await tw.start();
      for (let window = 1; window <= 4; window++) {
        await until(() => startedAt.length === 5 * window, `window ${window} to start 5 jobs (${startedAt.length} so far)`);
        expect(startedAt.length).toBe(5 * window);
        if (window < 4) await clock.advance("1s");
      }

      expect(startedAt).toEqual([0, 1, 2, 3].flatMap((w) => Array.from({ length: 5 }, () => T0 + w * SECOND)));
      // The outcomes are written in batches after the handlers return: read the counts until they are
      // in, with a deadline (a fixed number of reads ran out on a loaded machine).
      const deadline = Date.now() + 10_000;
      let counts: Record<string, number> | undefined;
      while ((counts = (await tw.jobs.counts("api"))[0]?.counts)?.succeeded !== 20 && Date.now() < deadline) {
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      expect(counts).toMatchObject({ succeeded: 20, pending: 0, running: 0 });
    });
  }
});
