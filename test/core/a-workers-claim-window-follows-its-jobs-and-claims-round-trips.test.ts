import { describe, expect, it } from "vitest";
import { ClaimWindow } from "../../src/queue/worker/claim-window.js";

const plain = (capacity: number) => ({ capacity, groupedAhead: false, depth: 1, limited: false });

describe("a worker's claim window: how much it claims and keeps in hand", () => {
  it("jobs of unknown speed are taken as slow: a batch in hand, a claim worth a quarter of it", () => {
    const w = new ClaimWindow({ batchSize: 20, adaptiveBatch: true, concurrency: 10 });
    expect(w.fasterThanRoundTrip).toBe(false);
    expect(w.inHand(plain(10))).toBe(20);
    expect(w.worthClaiming(plain(10))).toBe(5);
  });

  it("jobs faster than a claim's round trip keep two batches in hand, and the batch grows while the worker starves, up to its bound", () => {
    const w = new ClaimWindow({ batchSize: 20, adaptiveBatch: true, concurrency: 10 });
    w.claimReturned(40); // a first claim plans its statement: not a round trip
    w.claimReturned(4);
    w.jobRan(0.5);
    expect(w.fasterThanRoundTrip).toBe(true);
    expect(w.inHand(plain(10))).toBe(40);
    for (let i = 0; i < 10; i++) w.grow();
    expect(w.batch).toBe(500);
    w.reset();
    expect(w.batch).toBe(20);
    const fixed = new ClaimWindow({ batchSize: 20, adaptiveBatch: false, concurrency: 10 });
    fixed.grow();
    expect(fixed.batch).toBe(20);
  });

  it("slow jobs keep their slots and what they finish in four round trips, once both averages have settled, at most two batches", () => {
    const w = new ClaimWindow({ batchSize: 20, adaptiveBatch: true, concurrency: 4 });
    w.claimReturned(50);
    for (let i = 0; i < 11; i++) {
      w.claimReturned(10);
      w.jobRan(20);
    }
    // Eleven samples of each: not settled yet, so a batch whatever the slots.
    expect(w.inHand(plain(16))).toBe(20);
    w.claimReturned(10);
    w.jobRan(20);
    expect(w.fasterThanRoundTrip).toBe(false);
    // Jobs take twice a round trip: 4 slots + 4 × 4 / 2 = 12, under a batch of 20: a batch.
    expect(w.inHand(plain(4))).toBe(20);
    // 8 slots + 4 × 8 / 2 = 24: more than a batch.
    expect(w.inHand(plain(8))).toBe(24);
    // 16 slots + 32 = 48: at most two batches.
    expect(w.inHand(plain(16))).toBe(40);
  });

  it("a grouped or paced queue claims for its slots; a grouped queue of fast jobs runs whole capacities ahead", () => {
    const w = new ClaimWindow({ batchSize: 100, adaptiveBatch: false, concurrency: 8 });
    expect(w.inHand({ capacity: 8, groupedAhead: false, depth: 1, limited: true })).toBe(8);
    expect(w.worthClaiming({ capacity: 8, groupedAhead: false, depth: 1, limited: true })).toBe(2);
    expect(w.inHand({ capacity: 8, groupedAhead: true, depth: 4, limited: true })).toBe(128);
    expect(w.worthClaiming({ capacity: 8, groupedAhead: true, depth: 4, limited: true })).toBe(64);
  });
});
