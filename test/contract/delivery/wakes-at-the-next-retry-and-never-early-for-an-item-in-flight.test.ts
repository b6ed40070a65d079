import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, deferred, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("the wake-up a delivery asks for when nothing is carried ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is null with an empty outbox, else the soonest retry due time", async () => {
    const { tw, clock } = await engines.first();
    const callbacks = tw.delivery<number>("callbacks", {
      send: async () => {
        throw new Error("down");
      },
    });
    expect((await tw.tick()).nextWakeAt).toBeNull();

    const t0 = clock.now();
    await callbacks.emit([{ key: "a", payload: 1 }]);
    expect(await tw.tick()).toMatchObject({ carried: false, nextWakeAt: t0 + MINUTE });
    await clock.advance(20 * SECOND);
    await callbacks.emit([{ key: "b", payload: 2 }]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + MINUTE);
    // a's second failure puts it 5 minutes out; b's first retry is now the soonest.
    await clock.set(t0 + MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 20 * SECOND + MINUTE);
  });

  it("is not before the lease of an item another pass is still sending has lapsed", async () => {
    const { tw, clock } = await engines.first();
    const entered = deferred();
    let calls = 0;
    const callbacks = tw.delivery<number>("callbacks", {
      timeout: "10s",
      send: async () => {
        calls++;
        entered.resolve();
        return new Promise<never>(() => {});
      },
    });
    await callbacks.emit([{ key: "a", payload: 1 }]);
    const t0 = clock.now();
    const sending = tw.tick();
    await entered.promise;

    // A second pass (another process, or the runtime's next tick) finds the item leased: nothing to
    // send, and nothing due until the lease lapses, so it must not ask to come back at once.
    const other = await tw.tick();
    expect(other.outbound.used).toBe(0);
    expect(calls).toBe(1);
    expect(other.nextWakeAt).not.toBeNull();
    expect(other.nextWakeAt!).toBeGreaterThan(clock.now());

    await clock.advance("10s");
    await sending;
    // The send failed at its 10 s timeout; its retry is a minute after that.
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 10_000 + MINUTE);
  });
});
