import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("buckets left idle are pruned with the finished jobs ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("a group's bucket is gone an hour after its last token came back, a paused limiter's stays, and a pruned bucket is full", async () => {
    const { tw, clock } = await engine({ retention: { succeeded: "1m", failed: "1m", cancelled: "1m" } });
    const q = tw.queue("work", { group: true, groupRateLimit: { max: 1, per: "1s" }, handler: () => {} });
    const held = tw.limiter("held", { max: 1, per: "1s" });
    await q.enqueueMany(["a", "b"].map((group) => ({ payload: {}, group })));
    expect((await tw.tick()).ran).toBe(2);
    expect(await held.tryAcquire()).toBe(true);
    await held.pause(new Date(T0 + 3 * 3_600_000));
    const keys = ["group:work/a", "group:work/b", "limiter:held"];
    expect(Object.keys(await tw.store.queue.bucketStates({ buckets: keys })).sort()).toEqual(keys);

    await clock.advance("2h");
    await tw.tick();
    // The groups' buckets went with the prune; the paused limiter's row holds its pause.
    expect(Object.keys(await tw.store.queue.bucketStates({ buckets: keys }))).toEqual(["limiter:held"]);
    expect(await held.tryAcquire()).toBe(false);

    await q.enqueue({}, { group: "a" });
    expect((await tw.tick()).ran).toBe(1);
  });
});
