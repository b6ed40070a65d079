import { describe, expect, it } from "vitest";
import type { Tickwork } from "../../../src/tickwork.js";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

// Every store that can be opened again (SQLite in memory cannot): the new engine is a restarted process.
const reopenable = allStoreCases().filter((c) => c.name !== "sqlite-memory");

describe.each(reopenable)("a delivery across a restart ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("retries a failed item from the new engine at its time with the same id, and keeps dropped items for replay", async () => {
    const received: DeliveryMessage<{ n: number }>[] = [];
    let down = true;
    const declare = (tw: Tickwork) => ({
      daily: tw.delivery<{ n: number }>("daily", {
        send: async (m) => {
          received.push(m);
          if (down) throw new Error("down");
        },
      }),
      once: tw.delivery<{ n: number }>("once", {
        retry: () => null,
        send: async () => {
          throw new Error("gone for good");
        },
      }),
    });

    const before = await engines.first();
    const t0 = before.clock.now();
    const first = declare(before.tw);
    await first.daily.emit([{ key: "daily:u-1", payload: { n: 1 } }]);
    await first.once.emit([{ key: "once:u-1", payload: { n: 2 } }]);
    await before.tw.tick();
    await before.tw.stop();

    const after = await engines.another({ clock: before.clock });
    const { daily, once } = declare(after.tw);
    expect((await after.tw.tick()).nextWakeAt).toBe(t0 + MINUTE);
    expect(await daily.status()).toMatchObject({ retrying: 1 });
    // Held across the restart: the key is still not free for a second emit.
    expect(await daily.emit([{ key: "daily:u-1", payload: { n: 1 } }])).toMatchObject({ emitted: 0, skipped: ["daily:u-1"] });

    down = false;
    await after.clock.set(t0 + MINUTE);
    await after.tw.tick();
    expect(received.map((m) => [m.id, m.attempt])).toEqual([
      [received[0]!.id, 1],
      [received[0]!.id, 2],
    ]);
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0 });

    const [dead] = await once.dropped();
    expect(dead).toMatchObject({ key: "once:u-1", payload: { n: 2 }, lastError: expect.stringMatching(/gone for good/) });
    expect(await once.replay({ id: dead!.id })).toEqual([dead!.id]);
  });
});
