import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";
import { sharedStoreCases, twoEnginesFor } from "./two-engines.js";

describe.each(allStoreCases())("a group rate limit spaces each group's starts and leaves the other groups alone ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("groupRateLimit { max: 2, per: 1s }: each of groups a and b starts one job every 500 ms from the first tick, held jobs at 0 attempts", async () => {
    const { tw, clock } = await engine();
    const starts: { group: string; at: number }[] = [];
    const q = tw.queue("work", { concurrency: 10, group: true, groupRateLimit: { max: 2, per: "1s" }, handler: (job) => void starts.push({ group: job.group!, at: clock.now() - T0 }) });
    await q.enqueueMany([
      ...Array.from({ length: 4 }, () => ({ payload: {}, group: "a" })),
      ...Array.from({ length: 3 }, () => ({ payload: {}, group: "b" })),
    ]);

    const wakes: { at: number; nextWakeAt: number | null }[] = [];
    for (let i = 0; i < 20 && starts.length < 7; i++) {
      const result = await tw.tick();
      if (starts.length === 7) break;
      wakes.push({ at: clock.now() - T0, nextWakeAt: result.nextWakeAt === null ? null : result.nextWakeAt - T0 });
      const pending = await tw.jobs.list({ queue: "work", status: "pending" });
      expect(pending.map((j) => j.attempts).every((n) => n === 0)).toBe(true);
      await clock.set(result.nextWakeAt!);
    }

    const of = (group: string) => starts.filter((s) => s.group === group).map((s) => s.at);
    expect(of("a")).toEqual([0, 500, 1000, 1500]);
    expect(of("b")).toEqual([0, 500, 1000]);
    // Held, a tick asks to be woken when a group's next token is there.
    expect(wakes).toEqual([
      { at: 0, nextWakeAt: 500 },
      { at: 500, nextWakeAt: 1000 },
      { at: 1000, nextWakeAt: 1500 },
    ]);
  });

  it("a job of a new group enqueued while a and b wait on their tokens starts in the next tick, at once", async () => {
    const { tw, clock } = await engine();
    const starts: { group: string; at: number }[] = [];
    const q = tw.queue("work", { concurrency: 10, group: true, groupRateLimit: { max: 1, per: "1m" }, handler: (job) => void starts.push({ group: job.group!, at: clock.now() - T0 }) });
    await q.enqueueMany(["a", "a", "b", "b"].map((group) => ({ payload: {}, group })));

    expect(await tw.tick()).toMatchObject({ ran: 2, nextWakeAt: T0 + 60_000 });
    await clock.advance("10s");
    expect((await tw.tick()).ran).toBe(0);
    expect(tw.status().queues[0]).toMatchObject({ heldBy: "groupRateLimit" });
    await q.enqueue({}, { group: "c" });
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 60_000 });

    expect(starts).toEqual([
      { group: "a", at: 0 },
      { group: "b", at: 0 },
      { group: "c", at: 10_000 },
    ]);
    const pending = await tw.jobs.list({ queue: "work", status: "pending" });
    expect(pending.map((j) => [j.group, j.attempts]).sort()).toEqual([["a", 0], ["b", 0]]);
  });
});

describe.each(sharedStoreCases())("a group's rate budget is shared by every engine ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("groupRateLimit { max: 2, per: 1s }, A and B ticking in turns: group a starts every 500 ms whichever engine starts it", async () => {
    const { a, b, clock } = await engines();
    const starts: { by: string; at: number }[] = [];
    const declare = (by: "a" | "b") =>
      (by === "a" ? a : b).tw.queue("work", { concurrency: 5, group: true, groupRateLimit: { max: 2, per: "1s" }, handler: () => void starts.push({ by, at: clock.now() - T0 }) });
    const work = declare("a");
    declare("b");
    await work.enqueueMany(Array.from({ length: 6 }, () => ({ payload: {}, group: "a" })));

    for (let step = 0; step < 20 && starts.length < 6; step++) {
      const wakes: number[] = [];
      for (const p of step % 2 ? [b, a] : [a, b]) wakes.push((await p.tw.tick()).nextWakeAt!);
      if (starts.length < 6) await clock.set(Math.min(...wakes));
    }

    expect(starts.map((s) => s.at)).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    expect(new Set(starts.map((s) => s.by))).toEqual(new Set(["a", "b"]));
  });
});
