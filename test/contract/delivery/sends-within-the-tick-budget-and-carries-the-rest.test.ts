import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";
import type { DeliveryMessage } from "../../../src/delivery/options.js";

describe.each(allStoreCases())("a delivery sends within the tick budget ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("sends at most the budget per tick, carries the rest with a 100 ms wake-up, and sends each item once", async () => {
    const { tw, clock } = await engines.first({ tickBudget: 500 });
    const received: DeliveryMessage<{ n: number }>[] = [];
    const hourly = tw.delivery<{ n: number }>("hourly", { send: async (m) => void received.push(m) });
    const emitted = await hourly.emit(Array.from({ length: 1_200 }, (_, n) => ({ key: `acct-${n}`, payload: { n } })));
    expect(emitted).toEqual({ emitted: 1_200, skipped: [] });

    const first = await tw.tick();
    expect(received).toHaveLength(500);
    expect(first).toMatchObject({ carried: true, outbound: { used: 500, budget: 500 }, nextWakeAt: clock.now() + 100 });
    await clock.advance(100);
    expect((await tw.tick()).carried).toBe(true);
    await clock.advance(100);
    const third = await tw.tick();
    expect(received).toHaveLength(1_200);
    expect(third.outbound.used).toBe(200);
    expect(third.carried).toBe(false);
    expect(new Set(received.map((m) => m.payload.n)).size).toBe(1_200);
    expect((await tw.tick()).outbound.used).toBe(0);
    expect(await hourly.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
  });
});
