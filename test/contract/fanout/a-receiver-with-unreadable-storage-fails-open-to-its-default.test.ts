import { describe, expect, it } from "vitest";
import * as z from "zod";
import { fanoutReceiver } from "../../../src/fanout/receiver.js";

/**
 * Seed 001's receivers never hard-fail for want of configuration: storage that cannot be read (a
 * corrupt file, a KV outage at boot) counts as nothing stored, and the receiver runs on its static
 * default until the next push, which it then keeps.
 */
describe("a fan-out receiver whose storage cannot be read", () => {
  it("answers its default instead of throwing, then the next push", async () => {
    const saved: string[][] = [];
    const receiver = fanoutReceiver<string[]>({
      validate: (body) => z.array(z.string()).parse(body),
      storage: {
        load: () => {
          throw new Error("unexpected end of JSON input");
        },
        save: (state) => void saved.push(state),
      },
      fallback: null,
    });
    expect(await receiver.current()).toEqual({ state: null, source: "default" });
    await receiver.receive(["BTC", "ETH"]);
    expect(await receiver.current()).toEqual({ state: ["BTC", "ETH"], source: "pushed" });
    expect(saved).toEqual([["BTC", "ETH"]]);
  });
});
