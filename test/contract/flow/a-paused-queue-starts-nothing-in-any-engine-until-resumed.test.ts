import { describe, expect, it } from "vitest";
import type { QueueOptions } from "../../../src/queue/options.js";
import { sharedStoreCases, twoEnginesFor } from "./two-engines.js";
import { T0 } from "../../support/queue-fixtures.js";

/** A queue without shared limits keeps the plain claim; one with them claims under the flow-control transaction: both must see the pause. */
const declarations: [string, QueueOptions][] = [
  ["a plain queue", {}],
  ["a queue with globalConcurrency", { globalConcurrency: 10 }],
];

describe.each(sharedStoreCases())("a paused queue starts nothing in any engine until it is resumed ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  for (const [what, options] of declarations) {
    it(`${what}: paused in A, neither A's nor B's tick starts a job or asks to wake now; resumed in B, A runs them all`, async () => {
      const { a, b, clock } = await engines({ pollInterval: "2s" });
      const started: string[] = [];
      const work = a.tw.queue("work", { ...options, concurrency: 5, handler: () => void started.push("a") });
      b.tw.queue("work", { ...options, concurrency: 5, handler: () => void started.push("b") });
      await work.enqueueMany(Array.from({ length: 3 }, (_, n) => ({ payload: { n } })));

      expect(await a.tw.queues.pause("work")).toBe(true);
      expect(await b.tw.queues.pause("work")).toBe(false);
      expect(a.named("queue.paused")).toEqual([expect.objectContaining({ queue: "work" })]);
      for (const p of [a, b, a]) {
        const result = await p.tw.tick();
        expect(result.ran).toBe(0);
        // No spin: the paused queue's due jobs do not bring the wake-up to now.
        expect(result.nextWakeAt).toBe(clock.now() + 2_000);
      }
      expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "paused", started: 0 })]);
      await clock.advance("1m");
      expect((await b.tw.tick()).ran).toBe(0);

      const [status] = await b.tw.queues.status("work");
      expect(status).toMatchObject({ name: "work", paused: true, pausedAt: T0, pausedGroups: [], running: 0, pending: 3 });
      const jobs = await a.tw.jobs.list({ queue: "work" });
      expect(jobs.map((j) => [j.status, j.attempts])).toEqual([["pending", 0], ["pending", 0], ["pending", 0]]);

      expect(await b.tw.queues.resume("work")).toBe(true);
      expect(await b.tw.queues.resume("work")).toBe(false);
      expect(b.named("queue.resumed")).toEqual([expect.objectContaining({ queue: "work" })]);
      expect((await a.tw.tick()).ran).toBe(3);
      expect(started).toEqual(["a", "a", "a"]);
      expect((await a.tw.queues.status("work"))[0]).toMatchObject({ paused: false, pausedAt: null, pending: 0 });
    });
  }
});
