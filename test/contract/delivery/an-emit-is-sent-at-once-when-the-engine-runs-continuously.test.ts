import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { deferred, eventually, realEngines, within } from "../../support/real-time.js";

// The poll interval is an hour, so no timer of the engine explains a send within seconds: only the
// wake-up an emit (or a carried batch's 100 ms) sends.
describe.each(allStoreCases())("$name: a delivery on a started engine", (c) => {
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("sends an emit at once, without waiting for a poll, and a batch larger than the budget within a few carry wake-ups", async () => {
    const { tw, named } = await engine({ store: c.make(), pollInterval: "1h", rescueInterval: "1h", tickBudget: 50 });
    const received: DeliveryMessage<{ n: number }>[] = [];
    const first = deferred<DeliveryMessage<{ n: number }>>();
    const hourly = tw.delivery<{ n: number }>("hourly", {
      send: async (m) => {
        received.push(m);
        if (m.payload.n === 0) first.resolve(m);
      },
    });
    await tw.start();
    // The first pass found nothing: the engine now sleeps on its hour-long poll.
    await eventually(async () => (await hourly.status()).lastPass !== null, "the first pass");
    expect(received).toHaveLength(0);

    const emittedAt = Date.now();
    await hourly.emit([{ key: "h-0", payload: { n: 0 } }]);
    const sent = await within(first.promise, 5_000, "the emitted item is sent");
    expect(sent.key).toBe("h-0");
    expect(Date.now() - emittedAt).toBeLessThan(5_000);

    // Once that pass is over the engine sleeps again; 120 items then go out 50, 50 and 20 at 100 ms intervals.
    await eventually(async () => (await hourly.status()).lastPass?.sent === 1, "the pass that sent it to end");
    await hourly.emit(Array.from({ length: 120 }, (_, i) => ({ key: `h-${i + 1}`, payload: { n: i + 1 } })));
    await eventually(() => received.length === 121, "all 121 items to be sent", 5_000);
    await eventually(async () => (await hourly.status()).pending === 0, "the outbox to empty");
    expect(new Set(received.map((m) => m.payload.n)).size).toBe(121);
    expect(named("delivery.carried").map((e) => e.sent)).toEqual([50, 50]);
  });

  it("pushes a fan-out state at once, without waiting for a poll", async () => {
    const { tw } = await engine({ store: c.make(), pollInterval: "1h", rescueInterval: "1h" });
    const got = deferred<unknown>();
    const config = tw.fanout<string[]>("symbols", { groups: { alerts: { targets: ["alert-1"] } }, send: async (_target, payload) => got.resolve(payload) });
    await tw.start();
    await config.push(["BTC", "ETH"]);
    expect(await within(got.promise, 5_000, "the pushed state arrives")).toEqual(["BTC", "ETH"]);
    await eventually(async () => (await config.status()).converged, "the fan-out to converge");
  });
});
