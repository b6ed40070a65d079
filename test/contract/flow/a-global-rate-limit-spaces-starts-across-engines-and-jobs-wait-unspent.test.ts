import { describe, expect, it } from "vitest";
import { mostInAnyWindow, sharedStoreCases, twoEnginesFor, type TwoEngines } from "./two-engines.js";
import { SECOND, T0 } from "../../support/queue-fixtures.js";

describe.each(sharedStoreCases())("a global rate limit spaces job starts across engines, and held jobs wait without spending an attempt ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  /**
   * Both engines run `work` under `rateLimit`; they tick in turns (A first at even steps, B first at
   * odd ones), and the clock moves to the earliest wake-up either asks for. Returns each start's time
   * and engine, and every tick's answer while jobs were held.
   */
  async function runAll(e: TwoEngines, rateLimit: { max: number; per: string; burst?: number }, jobs: number) {
    const starts: { at: number; by: "a" | "b" }[] = [];
    const held: { at: number; nextWakeAt: number | null; pendingAttempts: number[] }[] = [];
    const declare = (by: "a" | "b") => (by === "a" ? e.a : e.b).tw.queue("work", { concurrency: 5, rateLimit: { ...rateLimit, scope: "global" }, handler: () => void starts.push({ at: e.clock.now(), by }) });
    const work = declare("a");
    declare("b");
    await work.enqueueMany(Array.from({ length: jobs }, (_, n) => ({ payload: { n } })));
    for (let step = 0; starts.length < jobs && step < 4 * jobs; step++) {
      const order = step % 2 ? [e.b, e.a] : [e.a, e.b];
      const wakes: number[] = [];
      for (const p of order) {
        const result = await p.tw.tick();
        wakes.push(result.nextWakeAt!);
      }
      if (starts.length === jobs) break;
      const pending = await e.a.tw.jobs.list({ queue: "work", status: "pending" });
      held.push({ at: e.clock.now(), nextWakeAt: Math.min(...wakes), pendingAttempts: pending.map((j) => j.attempts) });
      await e.clock.set(Math.min(...wakes));
    }
    return { starts, held };
  }

  it("{ max: 4, per: 1s }, burst 1: starts 250 ms apart from both engines, at most 4 in any second, held jobs at 0 attempts", async () => {
    const e = await engines();
    const { starts, held } = await runAll(e, { max: 4, per: "1s" }, 12);

    expect(starts.map((s) => s.at - T0)).toEqual(Array.from({ length: 12 }, (_, i) => i * 250));
    expect(new Set(starts.map((s) => s.by))).toEqual(new Set(["a", "b"]));
    expect(mostInAnyWindow(starts.map((s) => s.at), SECOND)).toBe(4);
    // While held, a tick asks to be woken when the next token is there, never "now" (a spin).
    for (const h of held) {
      expect(h.nextWakeAt).toBe(h.at + 250);
      expect(h.pendingAttempts.every((n) => n === 0)).toBe(true);
    }
    expect(held.map((h) => h.pendingAttempts.length)).toEqual(Array.from({ length: 11 }, (_, i) => 11 - i));
    const jobs = await e.b.tw.jobs.list({ queue: "work" });
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual(Array.from({ length: 12 }, () => ["succeeded", 1]));
  });

  it("{ max: 4, per: 1s, burst: 3 }: 3 start at once, then one every 250 ms; at most 4 + 3 - 1 = 6 in any second", async () => {
    const e = await engines();
    const { starts, held } = await runAll(e, { max: 4, per: "1s", burst: 3 }, 12);

    expect(starts.map((s) => s.at - T0)).toEqual([0, 0, 0, ...Array.from({ length: 9 }, (_, i) => (i + 1) * 250)]);
    expect(mostInAnyWindow(starts.map((s) => s.at), SECOND)).toBe(6);
    for (const h of held) {
      expect(h.nextWakeAt).toBe(h.at + 250);
      expect(h.pendingAttempts.every((n) => n === 0)).toBe(true);
    }
  });

  it("a tick of B right after A took the only token runs nothing and asks to wake at the token time", async () => {
    const e = await engines();
    const started: string[] = [];
    const work = e.a.tw.queue("work", { rateLimit: { max: 2, per: "1s", scope: "global" }, handler: () => void started.push("a") });
    e.b.tw.queue("work", { rateLimit: { max: 2, per: "1s", scope: "global" }, handler: () => void started.push("b") });
    await work.enqueueMany([{ payload: {} }, { payload: {} }]);

    expect(await e.a.tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 500 });
    expect(await e.b.tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 500 });
    expect(e.b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "rateLimit", started: 0, until: T0 + 500 })]);
    const [status] = await e.b.tw.queues.status("work");
    expect(status!.buckets).toEqual([{ bucket: "queue:work", intervalMs: 500, burst: 1, tokens: 0, pausedUntil: null, nextTokenAt: T0 + 500 }]);

    await e.clock.advance("499ms");
    expect((await e.b.tw.tick()).ran).toBe(0);
    await e.clock.advance("1ms");
    expect((await e.b.tw.tick()).ran).toBe(1);
    expect(started).toEqual(["a", "b"]);
  });
});
