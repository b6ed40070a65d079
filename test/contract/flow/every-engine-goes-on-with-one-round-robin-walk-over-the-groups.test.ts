import { describe, expect, it } from "vitest";
import { sharedStoreCases, twoEnginesFor } from "./two-engines.js";

describe.each(sharedStoreCases())("the engines of a grouped queue share one round-robin walk over its groups ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("A's claim takes groups a and b, then B's takes c and d, then A's e and a: no engine starts over from its own place", async () => {
    const { a, b } = await engines();
    const started: string[] = [];
    const options = { concurrency: 2, group: true as const, handler: (job: { group: string | null }) => void started.push(job.group!) };
    const qa = a.tw.queue("work", options);
    b.tw.queue("work", options);
    await qa.enqueueMany(["a", "b", "c", "d", "e"].flatMap((group) => [{ payload: {}, group }, { payload: {}, group }]));

    const order: string[][] = [];
    for (const engine of [a, b, a]) {
      started.length = 0;
      expect((await engine.tw.tick({ maxJobs: 2 })).ran).toBe(2);
      order.push([...started].sort());
    }
    expect(order).toEqual([["a", "b"], ["c", "d"], ["a", "e"]]);
  });
});
