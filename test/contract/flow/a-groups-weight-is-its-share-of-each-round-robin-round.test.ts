import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a group's weight is its share of each round-robin round ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  /** Runs `rounds` ticks of 5 jobs each and returns how many of each group every tick started. */
  async function shares(groupWeights: Record<string, number> | undefined, rounds: number) {
    const { tw } = await engine();
    let round: Record<string, number> = {};
    const q = tw.queue("work", { concurrency: 5, group: true, groupWeights, handler: (job) => void (round[job.group!] = (round[job.group!] ?? 0) + 1) });
    await q.enqueueMany([
      ...Array.from({ length: 12 }, () => ({ payload: {}, group: "big" })),
      ...Array.from({ length: 4 }, () => ({ payload: {}, group: "s1" })),
      ...Array.from({ length: 4 }, () => ({ payload: {}, group: "s2" })),
    ]);
    const perRound: Record<string, number>[] = [];
    for (let i = 0; i < rounds; i++) {
      round = {};
      // One tick of 5 jobs is one claim of the worker's 5 slots: one round.
      expect((await tw.tick({ maxJobs: 5 })).ran).toBe(5);
      perRound.push(round);
    }
    return perRound;
  }

  it("groupWeights { big: 3 }: every claim of 5 takes 3 of big and 1 each of s1 and s2, while all three have jobs", async () => {
    const perRound = await shares({ big: 3 }, 4);
    expect(perRound).toEqual(Array.from({ length: 4 }, () => ({ big: 3, s1: 1, s2: 1 })));
  });

  it("without weights the groups share the claim evenly", async () => {
    const perRound = await shares(undefined, 1);
    expect(perRound).toEqual([{ big: 2, s1: 2, s2: 1 }]);
  });
});
