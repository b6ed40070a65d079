import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("onDelivered ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("runs after a successful send and after a successful retry, before the key is freed; never after a failure", async () => {
    const { tw, clock } = await engines.first();
    const log: string[] = [];
    const duringHook: { key: string | null; reEmit: { emitted: number; skipped: string[] } }[] = [];
    let down = new Set(["u-2"]);
    const daily = tw.delivery<{ user: string }>("daily", {
      send: async (m) => {
        log.push(`send ${m.payload.user} #${m.attempt}`);
        if (down.has(m.payload.user)) throw new Error("down");
      },
      onDelivered: async (m: DeliveryMessage<{ user: string }>) => {
        log.push(`delivered ${m.payload.user} #${m.attempt}`);
        // Seed 000 advances daily_date here; until it returns, the key stays held.
        duringHook.push({ key: m.key, reEmit: await daily.emit([{ key: m.key, payload: m.payload }]) });
      },
    });
    await daily.emit([
      { key: "daily:u-1", payload: { user: "u-1" } },
      { key: "daily:u-2", payload: { user: "u-2" } },
    ]);
    const t0 = clock.now();
    await tw.tick();
    expect(log.sort()).toEqual(["delivered u-1 #1", "send u-1 #1", "send u-2 #1"]);
    expect(duringHook).toEqual([{ key: "daily:u-1", reEmit: { emitted: 0, skipped: ["daily:u-1"] } }]);

    down = new Set();
    log.length = 0;
    await clock.set(t0 + MINUTE);
    await tw.tick();
    expect(log).toEqual(["send u-2 #2", "delivered u-2 #2"]);
    expect(duringHook[1]).toEqual({ key: "daily:u-2", reEmit: { emitted: 0, skipped: ["daily:u-2"] } });
    // Both keys are free after the pass.
    expect(await daily.emit([{ key: "daily:u-1", payload: { user: "u-1" } }, { key: "daily:u-2", payload: { user: "u-2" } }])).toMatchObject({ emitted: 2 });
  });

  it("that throws is logged as delivery.on_delivered_failed; the item counts as delivered and is not sent again", async () => {
    const { tw, clock, named } = await engines.first();
    let sends = 0;
    const daily = tw.delivery<{ user: string }>("daily", {
      send: async () => void sends++,
      onDelivered: () => {
        throw new Error("could not advance daily_date");
      },
    });
    await daily.emit([{ key: "daily:u-1", payload: { user: "u-1" } }]);
    const result = await tw.tick();
    expect(sends).toBe(1);
    const [failed] = named("delivery.on_delivered_failed");
    expect(failed).toMatchObject({ level: "error", delivery: "daily", key: "daily:u-1" });
    expect(String(failed!.error)).toMatch(/could not advance daily_date/);
    expect(result.nextWakeAt).toBeNull();
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    await clock.advance("3h");
    await tw.tick();
    expect(sends).toBe(1);
  });
});
