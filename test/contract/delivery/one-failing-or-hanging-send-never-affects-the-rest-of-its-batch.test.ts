import { describe, expect, it } from "vitest";
import { CallTimeoutError } from "../../../src/core/errors.js";
import type { DeliveryMessage, SendContext } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, deferred, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("one send of a batch failing or hanging ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("delivers every other item of the batch; the thrown one and the timed-out one are retried alone", async () => {
    const { tw, clock, named } = await engines.first();
    const started = new Map<string, number>();
    const allStarted = deferred();
    const finished = new Map<string, number>();
    let hungSignal: AbortSignal | undefined;
    let down = true;
    const callbacks = tw.delivery<{ user: string }>("callbacks", {
      timeout: "10s",
      send: async (m: DeliveryMessage<{ user: string }>, ctx: SendContext) => {
        const user = m.payload.user;
        started.set(user, (started.get(user) ?? 0) + 1);
        if (started.size === 6) allStarted.resolve();
        if (down && user === "u-throws") throw new Error("receiver u-throws is down");
        if (down && user === "u-hangs") {
          hungSignal = ctx.signal;
          return new Promise<never>(() => {});
        }
        finished.set(user, clock.now());
      },
    });
    const users = ["u-1", "u-throws", "u-2", "u-hangs", "u-3", "u-4"];
    await callbacks.emit(users.map((user) => ({ key: user, payload: { user } })));

    const t0 = clock.now();
    const ticking = tw.tick();
    await allStarted.promise;
    // Let the healthy sends' promise chains settle (a turn of the event loop) before time moves.
    await new Promise((resolve) => setImmediate(resolve));
    // The healthy sends finished while the hung one was still open: nobody waited for it.
    expect([...finished.keys()].sort()).toEqual(["u-1", "u-2", "u-3", "u-4"]);
    expect([...finished.values()].every((at) => at === t0)).toBe(true);
    await clock.advance("10s");
    const result = await ticking;
    expect(hungSignal?.aborted).toBe(true);
    expect(hungSignal?.reason).toBeInstanceOf(CallTimeoutError);

    expect(result.outbound.used).toBe(6);
    expect(await callbacks.status()).toMatchObject({ pending: 0, retrying: 2, dropped: 0 });
    const retrying = await callbacks.outstanding();
    // Each retry is timed from its own failure: the hung send failed at its 10 s timeout.
    expect(retrying.map((m) => [m.key, m.attempt, m.runAt]).sort()).toEqual([
      ["u-hangs", 2, t0 + 10 * SECOND + MINUTE],
      ["u-throws", 2, t0 + MINUTE],
    ]);
    expect(retrying.find((m) => m.key === "u-throws")!.lastError).toMatch(/receiver u-throws is down/);
    expect(retrying.find((m) => m.key === "u-hangs")!.lastError).toMatch(/no answer within 10000 ms/);
    expect(named("delivery.failed").map((e) => e.key).sort()).toEqual(["u-hangs", "u-throws"]);

    // At each retry, only its failed item is sent again.
    down = false;
    await clock.set(t0 + MINUTE);
    expect((await tw.tick()).outbound.used).toBe(1);
    await clock.set(t0 + 10 * SECOND + MINUTE);
    expect((await tw.tick()).outbound.used).toBe(1);
    expect([...started.entries()].filter(([, n]) => n > 1).map(([u]) => u).sort()).toEqual(["u-hangs", "u-throws"]);
    expect(started.get("u-1")).toBe(1);
    expect(await callbacks.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    expect(finished.get("u-throws")).toBe(t0 + MINUTE);
    expect(finished.get("u-hangs")).toBe(t0 + 10 * SECOND + MINUTE);
  });
});
