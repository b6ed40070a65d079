import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { InvalidInputError } from "../../../src/core/errors.js";
import type { Tickwork } from "../../../src/tickwork.js";
import { EmptyStateError } from "../../../src/fanout/errors.js";
import { fanoutReceiver, type ReceiverStorage } from "../../../src/fanout/receiver.js";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

/** Seed 001's PriceAlert: symbol names only; null (no push yet, nothing stored) means allow all symbols. */
const alertSymbols = z.array(z.string().regex(/^[A-Z0-9]{2,10}$/));
type AlertSymbols = z.infer<typeof alertSymbols>;

/** The receiver's durable storage, as the DO's KV would be: here the engine's cache table. */
const cacheStorage = (tw: Tickwork, key: string): ReceiverStorage<AlertSymbols> => ({
  load: async () => (await tw.cache.get<AlertSymbols>(key))?.value,
  save: async (state) => void (await tw.cache.put(key, state)),
});

describe.each(allStoreCases())("a fan-out receiver ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("answers from the default, then the pushed state, then (a new instance) the stored one; refuses empty and invalid pushes keeping the last good state", async () => {
    const { tw } = await engines.first();
    const storage = cacheStorage(tw, "alerts:eu-1:symbols");
    const alert = fanoutReceiver<AlertSymbols>({ validate: (body) => alertSymbols.parse(body), storage, fallback: null });
    expect(await alert.current()).toEqual({ state: null, source: "default" });

    expect(await alert.receive(["BTC", "ETH"])).toEqual(["BTC", "ETH"]);
    expect(await alert.current()).toEqual({ state: ["BTC", "ETH"], source: "pushed" });

    // A transient empty read upstream must not switch every symbol off.
    await expect(alert.receive([])).rejects.toThrow(EmptyStateError);
    await expect(alert.receive([])).rejects.toThrow(/pushed state refused: the state is empty/);
    await expect(alert.receive([{ symbol: "BTC" }])).rejects.toThrow(InvalidInputError);
    const refusal = await alert.receive("BTC").catch((error: Error) => error);
    expect(refusal).toBeInstanceOf(InvalidInputError);
    expect((refusal as Error).message).toMatch(/^pushed state refused: [\s\S]*expected array, received string/);
    expect((refusal as Error).message).not.toMatch(/\n\s+at /);
    await expect(alert.receive(["btc!"])).rejects.toThrow(InvalidInputError);
    expect(await alert.current()).toEqual({ state: ["BTC", "ETH"], source: "pushed" });
    expect((await tw.cache.get("alerts:eu-1:symbols"))?.value).toEqual(["BTC", "ETH"]);

    // An evicted receiver comes back on what it stored, before any new push.
    const restarted = fanoutReceiver<AlertSymbols>({ validate: (body) => alertSymbols.parse(body), storage, fallback: null });
    expect(await restarted.current()).toEqual({ state: ["BTC", "ETH"], source: "stored" });
    await restarted.receive(["SOL"]);
    expect(await restarted.current()).toEqual({ state: ["SOL"], source: "pushed" });
    expect((await tw.cache.get("alerts:eu-1:symbols"))?.value).toEqual(["SOL"]);

    // A receiver whose storage holds nothing falls back to its static default (seed 001's PriceCollector table).
    const collector = fanoutReceiver<AlertSymbols>({ validate: (body) => alertSymbols.parse(body), storage: cacheStorage(tw, "collector:eu:symbols"), fallback: ["BTC"] });
    expect(await collector.current()).toEqual({ state: ["BTC"], source: "default" });
  });

  it("receives what a fan-out pushes, end to end, and keeps it in a real file", async () => {
    const { tw } = await engines.first();
    dir = mkdtempSync(join(tmpdir(), "tickwork-receiver-"));
    const file = join(dir, "symbols.json");
    const fileStorage: ReceiverStorage<AlertSymbols> = {
      load: () => {
        try {
          return JSON.parse(readFileSync(file, "utf8")) as AlertSymbols;
        } catch {
          return null;
        }
      },
      save: (state) => writeFileSync(file, JSON.stringify(state)),
    };
    const receiver = fanoutReceiver<AlertSymbols>({ validate: (body) => alertSymbols.parse(body), storage: fileStorage, fallback: null });
    const symbols = tw.fanout<{ symbol: string; decimals: number }[]>("symbols", {
      groups: { alerts: { targets: ["alert-1"], project: (s) => s.map((x) => x.symbol) } },
      send: async (_target, payload) => receiver.receive(payload),
    });
    await symbols.push([
      { symbol: "BTC", decimals: 8 },
      { symbol: "ETH", decimals: 18 },
    ]);
    await tw.tick();
    expect((await symbols.status()).converged).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(["BTC", "ETH"]);
    const fresh = fanoutReceiver<AlertSymbols>({ validate: (body) => alertSymbols.parse(body), storage: fileStorage, fallback: null });
    expect(await fresh.current()).toEqual({ state: ["BTC", "ETH"], source: "stored" });
  });
});
