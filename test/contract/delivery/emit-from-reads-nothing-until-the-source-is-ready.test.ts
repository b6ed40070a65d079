import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("emitFrom ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("reads and emits nothing while ready() is false, then every page once it is true", async () => {
    const { tw, named } = await engines.first({ logLevel: "debug" });
    const sent: string[] = [];
    const daily = tw.delivery<{ user: string }>("daily", { send: async (m) => void sent.push(m.payload.user) });
    // Seed 000: the daily pass waits until every tracking has caught up to the end of the day.
    const trackings = [
      { user: "u-1", caughtUp: true },
      { user: "u-2", caughtUp: false },
      { user: "u-3", caughtUp: true },
    ];
    let pagesRead = 0;
    const source = {
      ready: async () => trackings.every((t) => t.caughtUp),
      pages: {
        async *[Symbol.asyncIterator]() {
          for (let i = 0; i < trackings.length; i += 2) {
            pagesRead++;
            yield trackings.slice(i, i + 2);
          }
        },
      },
      item: (t: { user: string }) => ({ key: `daily:${t.user}`, payload: { user: t.user } }),
    };

    expect(await daily.emitFrom(source)).toEqual({ ready: false, emitted: 0, skipped: [] });
    expect(pagesRead).toBe(0);
    expect(named("delivery.not_ready")).toHaveLength(1);
    await tw.tick();
    expect(sent).toEqual([]);
    expect(await daily.status()).toMatchObject({ pending: 0 });

    trackings[1]!.caughtUp = true;
    expect(await daily.emitFrom(source)).toEqual({ ready: true, emitted: 3, skipped: [] });
    expect(pagesRead).toBe(2);
    await tw.tick();
    expect(sent.sort()).toEqual(["u-1", "u-2", "u-3"]);

    // Without ready(), a plain iterable of pages is read at once; held keys come back as skipped.
    await daily.emit([{ key: "daily:u-9", payload: { user: "u-9" } }]);
    const again = await daily.emitFrom({ pages: [[{ user: "u-9" }], [{ user: "u-10" }]], item: source.item });
    expect(again).toEqual({ ready: true, emitted: 1, skipped: ["daily:u-9"] });
  });
});
