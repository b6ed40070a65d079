import fc from "fast-check";
import { describe, it } from "vitest";
import type { Fanout } from "../../src/fanout/fanout.js";
import { duration, nameOr, oddString, oddValue, optionsOf, payload } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, lossyAt, ownError } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName, type RunEngine } from "./support/stores.js";

interface Pushed {
  target: unknown;
  payload: unknown;
}

/** Target ids and group names: ordinary, at and past their bounds, NUL, lone surrogates, other types. */
const id = fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), oddString, oddValue);
const target = fc.oneof(id, id.map((i) => ({ id: i })));
const groups = fc.oneof(
  { arbitrary: fc.dictionary(fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), oddString), fc.oneof(fc.array(target, { maxLength: 3 }).map((targets) => ({ targets })), oddValue), { minKeys: 1, maxKeys: 3 }), weight: 6 },
  { arbitrary: oddValue, weight: 1 },
);

const fanoutOptions = optionsOf({
  reconcile: fc.oneof(fc.constant(false), duration),
  timeout: duration,
  backoff: fc.oneof({ arbitrary: fc.constant<unknown>(() => 30_000), weight: 4 }, { arbitrary: oddValue, weight: 1 }),
});

/** Calls `step` and turns its failure into the property's, once the value was accepted. */
async function step<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new Error(`${what} failed once it was accepted: ${ownError(error).message}`);
  }
}

/** An accepted fan-out works: a state pushed reaches every target in the next tick, with no store error. */
async function expectPushesEveryTarget({ tw, events }: RunEngine, fanout: Fanout, pushed: Pushed[], targets: unknown[]): Promise<void> {
  await step("push", () => fanout.push({ v: 1 }));
  await step("tick", () => tw.tick());
  await step("status", () => fanout.status());
  const storeErrors = events.filter((e) => e.event === "store.error");
  if (storeErrors.length) throw new Error(`the accepted fan-out's tick logged store.error: ${JSON.stringify(storeErrors[0]).slice(0, 400)}`);
  const ids = new Set(targets.map((t) => (typeof t === "object" && t !== null ? (t as { id: unknown }).id : t)));
  if (pushed.length < ids.size) throw new Error(`the accepted fan-out pushed ${pushed.length} times in a tick, to ${ids.size} distinct targets`);
}

describe.each(STORE_KINDS)("fan-outs at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);

  it.each(CHECKS)("push stores the state and sends it as given, or refuses it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(payload, async (state) => {
        // An engine per run: a tick runs every fan-out its engine declares.
        const { tw } = await runEngine(ps);
        const pushed: Pushed[] = [];
        const fanout = tw.fanout(uniqueName("f"), { groups: { g: { targets: ["t1", "t2"] } }, send: (t, p) => void pushed.push({ target: t, payload: p }) });
        await judge(ps, check, () => fanout.push(state), {
          names: ["state"],
          accepted: async () => {
            const lost = lossyAt(state, "state");
            if (lost) throw new Error(`push accepted a state that JSON changes, at ${lost}`);
            await step("tick", () => tw.tick());
            const mine = pushed.filter((p) => p.target === "t1" || p.target === "t2");
            if (mine.length !== 2) throw new Error(`the state was pushed ${mine.length} times to the 2 targets`);
            for (const p of mine) if (JSON.stringify(p.payload) !== JSON.stringify(state)) throw new Error(`target ${String(p.target)} got ${JSON.stringify(p.payload)?.slice(0, 200)}, not the state pushed`);
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("a declaration is refused, or its fan-out pushes every target in the next tick ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(nameOr(), groups, fanoutOptions, async (name, g, { options, given }) => {
        const engine = await runEngine(ps);
        const pushed: Pushed[] = [];
        const unique = typeof name === "string" && /^[A-Za-z0-9]/.test(name) && name.length < 100 ? `${uniqueName("f")}${name}` : name;
        const targets = g !== null && typeof g === "object" ? Object.values(g as object).flatMap((v: unknown) => (Array.isArray((v as { targets?: unknown })?.targets) ? (v as { targets: unknown[] }).targets : [])) : [];
        await judge(ps, check, () => engine.tw.fanout(unique as string, { ...options, groups: g, send: (t: unknown, p: unknown) => void pushed.push({ target: t, payload: p }) } as never), {
          names: ["name", "groups", "targets", "id", ...given],
          accepted: (fanout) => expectPushesEveryTarget(engine, fanout, pushed, targets),
        });
      }),
      check,
    );
  });
});
