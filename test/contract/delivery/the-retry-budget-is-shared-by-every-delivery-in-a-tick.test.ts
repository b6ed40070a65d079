import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

/**
 * The cap on retries per tick is the engine's (`retryBudget`, default 50), shared by every delivery
 * the way the tick budget is: with the hourly and the daily delivery each holding a backlog of due
 * retries, a per-delivery cap alone sent up to 100 in a tick.
 */
describe.each(allStoreCases())("the tick's retry budget ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function twoBacklogs(options: { retryBudget?: number; retryBatch?: number } = {}) {
    const { retryBatch, ...engineOptions } = options;
    const engine = await engines.first(engineOptions);
    const { tw, clock } = engine;
    const sent: { delivery: string; attempt: number }[] = [];
    let down = true;
    const send = async (m: DeliveryMessage<unknown>) => {
      sent.push({ delivery: m.delivery, attempt: m.attempt });
      if (down) throw new Error("down");
    };
    const hourly = tw.delivery("hourly", { send, ...(retryBatch ? { retryBatch } : {}) });
    const daily = tw.delivery("daily", { send, ...(retryBatch ? { retryBatch } : {}) });
    const t0 = clock.now();
    await hourly.emit(Array.from({ length: 60 }, (_, n) => ({ key: `h-${n}`, payload: n })));
    await daily.emit(Array.from({ length: 60 }, (_, n) => ({ key: `d-${n}`, payload: n })));
    await tw.tick();
    expect(await hourly.status()).toMatchObject({ retrying: 60 });
    expect(await daily.status()).toMatchObject({ retrying: 60 });
    down = false;
    sent.length = 0;
    await clock.set(t0 + MINUTE);
    const retries = () => sent.filter((s) => s.attempt === 2);
    return { ...engine, sent, retries };
  }

  it("sends 50 retries in total in one tick across two deliveries with 60 due each, and carries the rest", async () => {
    const { tw, clock, retries } = await twoBacklogs();
    const first = await tw.tick();
    expect(retries()).toHaveLength(50);
    expect(first).toMatchObject({ carried: true, outbound: { used: 50 } });

    const perTick = [50];
    for (let i = 0; i < 5 && perTick.reduce((a, b) => a + b, 0) < 120; i++) {
      await clock.advance(100);
      const before = retries().length;
      await tw.tick();
      perTick.push(retries().length - before);
    }
    expect(perTick).toEqual([50, 50, 20]);
    expect(new Set(retries().map((s) => s.delivery))).toEqual(new Set(["hourly", "daily"]));
  });

  it("takes its size from the retryBudget option, and a delivery's retryBatch still caps its own share", async () => {
    const wide = await twoBacklogs({ retryBudget: 100 });
    await wide.tw.tick();
    expect(wide.retries()).toHaveLength(100);

    const capped = await twoBacklogs({ retryBudget: 100, retryBatch: 30 });
    await capped.tw.tick();
    expect(capped.retries().filter((s) => s.delivery === "hourly")).toHaveLength(30);
    expect(capped.retries().filter((s) => s.delivery === "daily")).toHaveLength(30);
  });

  it("refuses a retryBudget that is not a whole number of at least 1", async () => {
    for (const retryBudget of [0, -1, 2.5, "50", Number.POSITIVE_INFINITY]) {
      await expect(engines.first({ retryBudget: retryBudget as number }), String(retryBudget)).rejects.toThrow(/createTickwork: retryBudget: .*\(got/);
    }
  });
});
