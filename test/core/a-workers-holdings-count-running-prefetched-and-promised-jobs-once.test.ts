import { describe, expect, it } from "vitest";
import { Holdings } from "../../src/queue/worker/holdings.js";
import type { HeldJob } from "../../src/queue/worker/leases.js";

/** Enough of a held job for the ledger: its id and group. */
const held = (id: string, group: string | null = null) => ({ job: { id, group } }) as unknown as HeldJob;

describe("a worker's holdings: one count of what it has in hand", () => {
  it("free(limit) counts running, prefetched and promised jobs alike", () => {
    const h = new Holdings();
    h.prefetch([held("1"), held("2"), held("3")]);
    h.launchPrefetched(1, null, (e) => h.started(e));
    const giveBack = h.promise(2);
    expect({ running: h.runningCount, prefetched: h.prefetchedCount, inHand: h.inHand, free: h.free(10) }).toEqual({ running: 1, prefetched: 2, inHand: 5, free: 5 });
    expect(giveBack()).toBe(true);
    expect(giveBack()).toBe(false);
    expect(h.free(10)).toBe(7);
  });

  it("starts prefetched jobs in claim order up to the capacity, passing over a busy group's", () => {
    const h = new Holdings();
    h.prefetch([held("1", "a"), held("2", "a"), held("3", "b"), held("4", null)]);
    const busy = new Set<string>();
    const order: string[] = [];
    h.launchPrefetched(3, busy, (e) => {
      order.push(e.job.id);
      if (e.job.group) busy.add(e.job.group);
      h.started(e);
    });
    expect(order).toEqual(["1", "3", "4"]);
    expect(h.takeBack().map((e) => e.job.id)).toEqual(["2"]);
  });

  it("a declined launch (a lapsed lease) leaves the slot free for the next job", () => {
    const h = new Holdings();
    h.prefetch([held("1"), held("2")]);
    h.launchPrefetched(1, null, (e) => e.job.id === "2" && h.started(e));
    expect([...h.runningJobs()].map((e) => e.job.id)).toEqual(["2"]);
  });

  it("takes back a group's prefetched jobs, forgets one, and resolves drained() once nothing runs", async () => {
    const h = new Holdings();
    const [a, b, c] = [held("1", "x"), held("2", "y"), held("3", "x")];
    h.prefetch([a, b, c]);
    expect(h.takeBack("x")).toEqual([a, c]);
    expect(h.holds("2")).toBe(true);
    h.forget(b);
    expect(h.holds("2")).toBe(false);
    h.started(a);
    let drained = false;
    const done = h.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    h.ended(a);
    await done;
    expect(drained).toBe(true);
  });
});
