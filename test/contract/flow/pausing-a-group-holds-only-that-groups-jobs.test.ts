import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("pausing a group holds only that group's jobs ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("group a paused: a tick runs b's and c's jobs, a's wait at 0 attempts without a wake-up at now; resumed, they run", async () => {
    const { tw, clock, named } = await engine({ pollInterval: "2s" });
    const started: string[] = [];
    const q = tw.queue("work", { concurrency: 5, group: true, handler: (job) => void started.push(job.group!) });
    await q.enqueueMany(["a", "a", "b", "b", "c"].map((group) => ({ payload: {}, group })));

    expect(await tw.queues.pause("work", { group: "a" })).toBe(true);
    expect(await tw.queues.pause("work", { group: "a" })).toBe(false);
    const result = await tw.tick();
    expect(result.ran).toBe(3);
    expect(result.nextWakeAt).not.toBe(clock.now());
    expect(result.nextWakeAt).toBeGreaterThan(clock.now());
    expect([...started].sort()).toEqual(["b", "b", "c"]);
    expect(named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "paused" })]);

    const [status] = await tw.queues.status("work");
    expect(status).toMatchObject({ paused: false, pausedGroups: ["a"], pending: 2, groups: [{ group: "a", pending: 2, running: 0 }] });
    const waiting = await tw.jobs.list({ queue: "work", status: "pending" });
    expect(waiting.map((j) => [j.group, j.attempts])).toEqual([["a", 0], ["a", 0]]);
    await clock.advance("1m");
    expect((await tw.tick()).ran).toBe(0);

    expect(await tw.queues.resume("work", { group: "a" })).toBe(true);
    expect((await tw.tick()).ran).toBe(2);
    expect((await tw.queues.status("work"))[0]).toMatchObject({ pausedGroups: [], pending: 0 });
  });

  it("pausing a group leaves a pause of the whole queue alone, and resuming the queue leaves the group paused", async () => {
    const { tw } = await engine();
    const q = tw.queue("work", { concurrency: 5, group: true, handler: () => {} });
    await q.enqueueMany(["a", "b"].map((group) => ({ payload: {}, group })));

    await tw.queues.pause("work");
    await tw.queues.pause("work", { group: "b" });
    expect((await tw.queues.status("work"))[0]).toMatchObject({ paused: true, pausedGroups: ["b"] });
    expect((await tw.tick()).ran).toBe(0);
    await tw.queues.resume("work");
    expect((await tw.tick()).ran).toBe(1);
    expect((await tw.jobs.list({ queue: "work", status: "pending" })).map((j) => j.group)).toEqual(["b"]);
  });
});
