import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { T0, deferred, engineFor, until } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("queues.status() reports pauses, running and pending jobs, shared buckets and the busiest groups ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("a grouped queue with a global rate limit, one job running, group b paused: every field of its status", async () => {
    const { tw, clock } = await engine();
    const open = deferred();
    let started = 0;
    const q = tw.queue("work", {
      concurrency: 5,
      group: true,
      groupConcurrency: 2,
      globalConcurrency: 4,
      rateLimit: { max: 2, per: "1s", scope: "global", burst: 2 },
      handler: async () => {
        started++;
        await open.promise;
      },
    });
    tw.queue("idle");
    await q.enqueueMany(["a", "a", "a", "b", "b", "c"].map((group) => ({ payload: {}, group })));
    await tw.queues.pause("work", { group: "b" });
    await clock.advance("1s");

    const tick = tw.tick();
    await until(() => started === 2, "two jobs to start");
    const all = await tw.queues.status();
    open.resolve();
    await tick;

    expect(all.map((s) => s.name)).toEqual(["work", "idle"]);
    const [work, idle] = all;
    expect(work).toEqual({
      name: "work",
      paused: false,
      pausedAt: null,
      pausedGroups: ["b"],
      globalConcurrency: 4,
      groupConcurrency: 2,
      running: 2,
      held: 0,
      pending: 4,
      // Burst 2 spent by the two starts: the next token is one interval (500 ms) away.
      buckets: [{ bucket: "queue:work", intervalMs: 500, burst: 2, tokens: 0, pausedUntil: null, nextTokenAt: T0 + 1_500 }],
      groups: [
        { group: "a", pending: 2, running: 1 },
        { group: "b", pending: 2, running: 0 },
        { group: "c", pending: 0, running: 1 },
      ],
      heldBy: "rateLimit",
    });
    expect(idle).toEqual({
      name: "idle", paused: false, pausedAt: null, pausedGroups: [], globalConcurrency: null, groupConcurrency: null,
      running: 0, held: 0, pending: 0, buckets: [], groups: [], heldBy: null,
    });
  });

  it("status(name, { groups: 1 }) names only the busiest group, and a paused queue shows when it was paused", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("work", { group: true });
    await q.enqueueMany(["a", "b", "b", "c"].map((group) => ({ payload: {}, group })));
    await clock.advance("5s");
    await tw.queues.pause("work");

    expect(await tw.queues.status("work", { groups: 1 })).toEqual([
      expect.objectContaining({ name: "work", paused: true, pausedAt: T0 + 5_000, pending: 4, groups: [{ group: "b", pending: 2, running: 0 }] }),
    ]);
    expect((await tw.queues.status("work", { groups: 0 }))[0]!.groups).toEqual([]);
  });
});
