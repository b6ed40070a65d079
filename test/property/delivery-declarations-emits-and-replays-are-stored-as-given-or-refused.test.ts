import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import type { Delivery } from "../../src/delivery/delivery.js";
import type { DeliveryMessage } from "../../src/delivery/options.js";
import type { Tickwork } from "../../src/tickwork.js";
import { duration, instant, int32, nameOr, notAnObject, oddString, oddValue, optionsOf, payload, rowId } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, lossyAt, ownError } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName, type RunEngine } from "./support/stores.js";

const send = () => {};

/** Keys: ordinary, absent, null, at and past their bounds, NUL, lone surrogates, other types. */
const key = fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom<unknown>(undefined, null), oddString, oddValue);

const item = fc.oneof(
  { arbitrary: fc.tuple(key, payload).map(([k, p]) => (k === undefined ? { payload: p } : { key: k, payload: p })), weight: 12 },
  { arbitrary: notAnObject, weight: 1 },
);

const deliveryOptions = optionsOf({
  budget: int32,
  retryBatch: int32,
  timeout: duration,
  retry: fc.oneof({ arbitrary: fc.constant<unknown>(() => 60_000), weight: 4 }, { arbitrary: oddValue, weight: 1 }),
  onDelivered: fc.oneof({ arbitrary: fc.constant<unknown>(() => {}), weight: 4 }, { arbitrary: oddValue, weight: 1 }),
});

/** An accepted delivery works: an item emitted is sent in the next tick, with no store error logged. */
async function expectSends({ tw, events }: RunEngine, delivery: Delivery, sent: DeliveryMessage<unknown>[]): Promise<void> {
  const step = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call();
    } catch (error) {
      throw new Error(`${what} failed once the delivery was accepted: ${ownError(error).message}`);
    }
  };
  await step("emit", () => delivery.emit([{ key: uniqueName("k"), payload: { n: 1 } }]));
  await step("tick", () => tw.tick());
  const storeErrors = events.filter((e) => e.event === "store.error");
  if (storeErrors.length) throw new Error(`the accepted delivery's tick logged store.error: ${JSON.stringify(storeErrors[0]).slice(0, 400)}`);
  if (sent.length !== 1) throw new Error(`the accepted delivery sent ${sent.length} items in a tick, not the 1 emitted`);
}

describe.each(STORE_KINDS)("deliveries at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
  });

  it.each(CHECKS)("emit writes each item as given or none of them ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.array(item, { maxLength: 5 }), async (items) => {
        const delivery = tw.delivery(uniqueName("d"), { send });
        await judge(ps, check, () => delivery.emit(items as never), {
          names: ["key", "payload", "emit", "item"],
          accepted: async (result) => {
            const given = items as { key?: string | null; payload: unknown }[];
            for (const [i, it] of given.entries()) {
              const lost = lossyAt(it.payload);
              if (lost) throw new Error(`emit accepted item ${i} whose payload JSON changes, at ${lost}`);
            }
            const stored = await delivery.outstanding({ retrying: false, limit: 500 });
            const keys = new Set(given.map((it) => it.key ?? null).filter((k) => k !== null));
            const expected = given.filter((it) => it.key == null).length + keys.size;
            if (result.emitted !== expected || stored.length !== expected) throw new Error(`emit of ${given.length} items (${keys.size} distinct keys) reported ${result.emitted} emitted and stored ${stored.length}`);
            for (const row of stored) {
              const match = given.find((it) => (it.key ?? null) === row.key && JSON.stringify(it.payload) === JSON.stringify(row.payload));
              if (!match) throw new Error(`stored item ${fc.stringify({ key: row.key, payload: row.payload }).slice(0, 300)} is none of the items emitted`);
            }
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("emit of something other than an array is refused ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(oddValue, async (items) => {
        const delivery = tw.delivery(uniqueName("d"), { send });
        await judge(ps, check, () => delivery.emit(items as never), {
          names: ["emit", "array", "item"],
          accepted: () => {
            if (!(Array.isArray(items) && items.length === 0)) throw new Error("emit accepted a value that is not an array of items");
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("a declaration is refused, or its delivery sends an item in the next tick ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(nameOr(), deliveryOptions, async (name, { options, given }) => {
        const engine = await runEngine(ps);
        const sent: DeliveryMessage<unknown>[] = [];
        const unique = typeof name === "string" && /^[A-Za-z0-9]/.test(name) && name.length < 100 ? `${uniqueName("d")}${name}` : name;
        await judge(ps, check, () => engine.tw.delivery(unique as string, { ...options, send: (m: DeliveryMessage<unknown>) => void sent.push(m) } as never), {
          names: ["name", ...given],
          accepted: (delivery) => expectSends(engine, delivery, sent),
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("outstanding, dropped and replay answer or refuse any argument ($says)", async ({ check }) => {
    const delivery = tw.delivery(uniqueName("d"), { send });
    await delivery.emit([{ key: "a", payload: 1 }, { payload: 2 }]);
    const call = fc.oneof(
      optionsOf({ retrying: fc.oneof(fc.boolean(), oddValue), limit: int32, after: fc.oneof(rowId, oddString) }).map(({ options, given }) => ({ run: () => delivery.outstanding(options as never), given })),
      optionsOf({ limit: int32, before: fc.oneof(optionsOf({ droppedAt: instant, id: fc.oneof(rowId, oddString) }, false).map((o) => o.options), oddValue) }).map(({ options, given }) => ({ run: () => delivery.dropped(options as never), given })),
      fc.oneof(
        fc.oneof(rowId, oddString, oddValue).map((id) => ({ id })),
        optionsOf({ since: instant, limit: int32 }, false).map((o) => o.options),
        notAnObject,
      ).map((target) => ({ run: () => delivery.replay(target as never), given: ["id", "since", "limit", "replay"] })),
    );
    await assertProperty(
      fc.asyncProperty(call, async ({ run, given }) => {
        await judge(ps, check, run as () => Promise<unknown>, { names: given });
      }),
      check,
    );
  });
});
