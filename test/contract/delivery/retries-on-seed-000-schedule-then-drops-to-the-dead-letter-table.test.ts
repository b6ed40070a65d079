import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { HOUR, MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

/** Seed 000: failed callbacks are persisted on first failure, retried after 1m, 5m, 15m, 1h, 2h, then dropped. */
const STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 2 * HOUR];

describe.each(allStoreCases())("a callback that keeps failing ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is persisted at the first failure, retried at 1m 5m 15m 1h 2h and never earlier, then dropped with an error event", async () => {
    const { tw, clock, named } = await engines.first();
    const attempts: { at: number; attempt: number; id: string }[] = [];
    const daily = tw.delivery<{ user: string }>("daily", {
      send: async (m) => {
        attempts.push({ at: clock.now(), attempt: m.attempt, id: m.id });
        throw new Error(`portfolio ${m.payload.user} unavailable (attempt ${m.attempt})`);
      },
    });
    const t0 = clock.now();
    await daily.emit([{ key: "daily:u-1", payload: { user: "u-1" } }]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + STEPS[0]!);

    const [persisted] = await daily.outstanding();
    expect(persisted).toMatchObject({ key: "daily:u-1", attempt: 2, runAt: t0 + STEPS[0]! });
    expect(persisted!.lastError).toMatch(/unavailable \(attempt 1\)/);

    let due = t0;
    for (const [i, step] of STEPS.entries()) {
      due += step;
      // A millisecond early: nothing is sent.
      await clock.set(due - 1);
      expect((await tw.tick()).outbound.used, `nothing sent before retry ${i + 1}`).toBe(0);
      await clock.set(due);
      const result = await tw.tick();
      expect(result.outbound.used, `retry ${i + 1} at +${due - t0} ms`).toBe(1);
      expect(result.nextWakeAt).toBe(i < STEPS.length - 1 ? due + STEPS[i + 1]! : null);
    }

    expect(attempts.map((a) => a.at - t0)).toEqual([0, MINUTE, 6 * MINUTE, 21 * MINUTE, 81 * MINUTE, 201 * MINUTE]);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(attempts.map((a) => a.id)).size).toBe(1);
    expect(named("delivery.failed")).toHaveLength(5);

    const dropped = named("delivery.dropped");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ level: "error", delivery: "daily", id: attempts[0]!.id, key: "daily:u-1", attempts: 6 });
    expect(String(dropped[0]!.error)).toMatch(/attempt 6/);
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 1, nextAt: null });
    expect(await daily.dropped()).toEqual([
      expect.objectContaining({ id: attempts[0]!.id, key: "daily:u-1", payload: { user: "u-1" }, attempt: 6, droppedAt: t0 + 201 * MINUTE, lastError: expect.stringMatching(/attempt 6/) }),
    ]);

    // Dropped for good: nothing more is sent, however long the engine runs.
    await clock.advance("1d");
    expect((await tw.tick()).outbound.used).toBe(0);
    expect(attempts).toHaveLength(6);
  });
});
