import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";

describe.each(allStoreCases())("an idle worker and a lapsed lease ($name)", (storeCase) => {
  const engine = realEngines({ afterStop: () => storeCase.cleanup() });

  // A dead worker's lapsed lease is for the engine's rescue pass; a worker that woke for it would
  // find nothing to claim, see the same lapsed lease as its next wake-up, and claim again at once.
  it("waits for its poll interval instead of claiming again and again until the rescue pass", async () => {
    const { tw } = await engine({ store: storeCase.make(), rescueInterval: "1h", pollInterval: "1h" });
    tw.queue("work", { handler: () => {} });
    await tw.queue("other").enqueue({});
    await tw.enqueue("work", { n: 1 });
    // The lease must lapse after start() (whose first rescue pass would otherwise return the job),
    // however slowly a loaded machine starts the engine.
    const now = Date.now();
    const leaseUntil = now + 2_000;
    await tw.store.queue.claimDue({ queue: "work", limit: 1, now, leaseUntil, workerId: "dead/work" });

    // Claims made at or after the lapse, by the claim's own clock reading. How many come before it
    // (the start's claim, one more when the notification listener connects) is not this test's business.
    let claimsAfterLapse = 0;
    const claimDue = tw.store.queue.claimDue.bind(tw.store.queue);
    tw.store.queue.claimDue = (params) => {
      if (params.now >= leaseUntil) claimsAfterLapse++;
      return claimDue(params);
    };
    await tw.start();
    expect(Date.now()).toBeLessThan(leaseUntil);
    // 400 ms of real time past the lapse, in which a spinning worker would claim hundreds of times.
    await new Promise((resolve) => setTimeout(resolve, leaseUntil + 400 - Date.now()));
    // One wake-up at the lapse finds nothing to claim; the next is an hour away. (A loaded machine
    // may deliver one wake-up late and another on time, hence two; a spinning worker makes hundreds.)
    expect(claimsAfterLapse).toBeLessThanOrEqual(2);
    expect((await tw.jobs.list({ queue: "work" }))[0]).toMatchObject({ status: "running" });
  });
});
