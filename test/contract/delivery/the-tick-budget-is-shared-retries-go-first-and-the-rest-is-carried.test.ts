import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, enginesFor } from "../../support/schedule-fixtures.js";

type Sent = { delivery: string; key: string | null; attempt: number };

describe.each(allStoreCases())("the per-tick budget ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is shared by a fan-out and two deliveries in one tick; what does not fit is carried with a 100 ms wake-up", async () => {
    const { tw, clock } = await engines.first({ tickBudget: 10 });
    const sent: Sent[] = [];
    const record = async (m: DeliveryMessage<unknown>) => void sent.push({ delivery: m.delivery, key: m.key, attempt: m.attempt });
    const pushes: string[] = [];
    const config = tw.fanout<string[]>("config", { groups: { all: { targets: ["t-1", "t-2", "t-3", "t-4"] } }, send: async (target) => void pushes.push(target as string) });
    const a = tw.delivery("a", { send: record });
    const b = tw.delivery("b", { send: record });
    await config.push(["BTC"]);
    await a.emit(Array.from({ length: 5 }, (_, n) => ({ key: `a-${n}`, payload: n })));
    await b.emit(Array.from({ length: 5 }, (_, n) => ({ key: `b-${n}`, payload: n })));

    const first = await tw.tick();
    expect(first).toMatchObject({ carried: true, outbound: { used: 10, budget: 10 }, nextWakeAt: clock.now() + 100 });
    expect(pushes).toHaveLength(4);
    expect(sent.filter((s) => s.delivery === "a")).toHaveLength(5);
    expect(sent.filter((s) => s.delivery === "b")).toHaveLength(1);

    await clock.advance(100);
    const second = await tw.tick();
    expect(second.carried).toBe(false);
    expect(second.outbound.used).toBe(4);
    expect(pushes).toHaveLength(4);
    expect(sent.filter((s) => s.delivery === "b").map((s) => s.key).sort()).toEqual(["b-0", "b-1", "b-2", "b-3", "b-4"]);
    expect(new Set(sent.map((s) => `${s.delivery}/${s.key}`)).size).toBe(10);
  });

  it("gives a delivery at most its own budget of the tick's", async () => {
    const { tw, clock } = await engines.first({ tickBudget: 10 });
    const sent: Sent[] = [];
    const record = async (m: DeliveryMessage<unknown>) => void sent.push({ delivery: m.delivery, key: m.key, attempt: m.attempt });
    const small = tw.delivery("small", { budget: 2, send: record });
    const other = tw.delivery("other", { send: record });
    await small.emit(Array.from({ length: 5 }, (_, n) => ({ payload: n })));
    await other.emit(Array.from({ length: 5 }, (_, n) => ({ payload: n })));

    const used: number[] = [];
    const perTick: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = sent.filter((s) => s.delivery === "small").length;
      const result = await tw.tick();
      used.push(result.outbound.used);
      perTick.push(sent.filter((s) => s.delivery === "small").length - before);
      expect(result.carried).toBe(i < 2);
      await clock.advance(100);
    }
    expect(perTick).toEqual([2, 2, 1]);
    expect(used).toEqual([7, 2, 1]);
  });

  it("sends due retries first, at most retryBatch of them, then first sends; the rest is carried", async () => {
    const { tw, clock } = await engines.first({ tickBudget: 20 });
    const sent: Sent[] = [];
    let down = true;
    const callbacks = tw.delivery<number>("callbacks", {
      retryBatch: 5,
      send: async (m) => {
        sent.push({ delivery: m.delivery, key: m.key, attempt: m.attempt });
        if (down) throw new Error("down");
      },
    });
    const t0 = clock.now();
    await callbacks.emit(Array.from({ length: 10 }, (_, n) => ({ key: `retry-${n}`, payload: n })));
    expect((await tw.tick()).outbound.used).toBe(10);
    expect(await callbacks.status()).toMatchObject({ retrying: 10 });
    down = false;
    sent.length = 0;

    await clock.advance(30 * SECOND);
    await callbacks.emit(Array.from({ length: 30 }, (_, n) => ({ key: `fresh-${n}`, payload: n })));
    await clock.set(t0 + MINUTE);
    const first = await tw.tick();
    expect(first).toMatchObject({ carried: true, outbound: { used: 20 }, nextWakeAt: clock.now() + 100 });
    expect(sent.slice(0, 5).every((s) => s.attempt === 2 && s.key!.startsWith("retry-"))).toBe(true);
    expect(sent.slice(5).every((s) => s.attempt === 1 && s.key!.startsWith("fresh-"))).toBe(true);
    expect(sent).toHaveLength(20);

    await clock.advance(100);
    const second = await tw.tick();
    expect(second.outbound.used).toBe(20);
    expect(sent.slice(20, 25).every((s) => s.attempt === 2)).toBe(true);
    await clock.advance(100);
    const third = await tw.tick();
    expect(third).toMatchObject({ carried: false, outbound: { used: 0 } });
    expect(new Set(sent.map((s) => s.key)).size).toBe(40);
    expect(await callbacks.status()).toMatchObject({ pending: 0, retrying: 0 });
  });

  it("takes 50 retries per tick by default, ahead of any backlog of first sends", async () => {
    const { tw, clock } = await engines.first();
    const sent: Sent[] = [];
    let down = true;
    const callbacks = tw.delivery<number>("callbacks", {
      send: async (m) => {
        sent.push({ delivery: m.delivery, key: m.key, attempt: m.attempt });
        if (down) throw new Error("down");
      },
    });
    const t0 = clock.now();
    await callbacks.emit(Array.from({ length: 60 }, (_, n) => ({ key: `retry-${n}`, payload: n })));
    await tw.tick();
    down = false;
    sent.length = 0;
    await callbacks.emit(Array.from({ length: 600 }, (_, n) => ({ key: `fresh-${n}`, payload: n })));
    await clock.set(t0 + MINUTE);

    const first = await tw.tick();
    expect(first).toMatchObject({ carried: true, outbound: { used: 500, budget: 500 } });
    expect(sent.filter((s) => s.attempt === 2)).toHaveLength(50);
    expect(sent.slice(0, 50).every((s) => s.attempt === 2)).toBe(true);
    await clock.advance(100);
    const second = await tw.tick();
    expect(second).toMatchObject({ carried: false, outbound: { used: 160 } });
    expect(sent.slice(500, 510).every((s) => s.attempt === 2)).toBe(true);
    expect(new Set(sent.map((s) => s.key)).size).toBe(660);
  });
});
