import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import type { Tickwork } from "../../src/tickwork.js";
import { duration, int32, oddString, oddValue, optionsOf, payload } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, lossyAt, outcome } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName } from "./support/stores.js";

/** Text fields of a key: ordinary, at and past their bounds (255 and 500 characters, and 100,000), NUL, lone surrogates, other types. */
const text = fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), oddString, oddValue);

const RUN_FIELDS = ["scope", "key", "operation", "claimScope", "fingerprint"];
const runOptions = optionsOf(Object.fromEntries(RUN_FIELDS.map((f) => [f, text])), false);

describe.each(STORE_KINDS)("idempotency at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
  });

  it.each(CHECKS)("run claims the key exactly as given and replays it, or refuses it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(runOptions, payload, async ({ options }, result) => {
        // Scopes and operation of their own per run (their odd characters kept), so that a key drawn
        // twice is mostly a new key, not a replay of an earlier run.
        const scoped: Record<string, unknown> = { ...options };
        for (const field of ["scope", "claimScope", "operation"]) {
          const value = scoped[field];
          if (typeof value === "string" && value.length < 100) scoped[field] = `${uniqueName(field)}:${value}`;
        }
        let calls = 0;
        const operation = () => {
          calls++;
          return result;
        };
        await judge(ps, check, () => tw.idempotency.run(scoped as never, operation), {
          // A field left out may be the one at fault (operation, scope): any of them may be named.
          names: [...RUN_FIELDS, "result"],
          accepted: async (first) => {
            const key = scoped.key;
            if (typeof key !== "string" || key === "") return; // no key: no deduplication, nothing stored
            // calls is 0 when an earlier run with the same odd fields stored the result replayed here.
            // undefined is stored as no result and replayed as undefined: not a loss.
            const lost = result === undefined ? null : lossyAt(result, "result");
            if (calls === 1 && lost) throw new Error(`run accepted a result that JSON changes, at ${lost}`);
            const again = await outcome(() => tw.idempotency.run(scoped as never, operation));
            if (!again.ok) throw new Error(`the same key run again was refused: ${again.error.message}`);
            if (calls > 1) throw new Error(`the same key ran its operation ${calls} times`);
            if (JSON.stringify(again.value) !== JSON.stringify(first)) throw new Error(`the replay answered ${JSON.stringify(again.value)?.slice(0, 200)}, not the result of the first run ${JSON.stringify(first)?.slice(0, 200)}`);
            const owner = (scoped.claimScope ?? scoped.scope) as string;
            const listed = await tw.idempotency.list(owner, 500);
            if (!listed.some((r) => r.key === key && r.operation === scoped.operation)) {
              throw new Error(`list(${JSON.stringify(owner).slice(0, 80)}) does not show key ${JSON.stringify(key).slice(0, 80)} as given (stored as ${JSON.stringify(listed.map((r) => r.key)).slice(0, 200)})`);
            }
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("list answers or refuses any scope and limit ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(text, fc.option(int32, { nil: undefined }), async (scope, limit) => {
        await judge(ps, check, () => tw.idempotency.list(scope as string, limit as number), { names: ["scope", "limit"] });
      }),
      check,
    );
  });

  it.each(CHECKS)("ttl and staleAfter are refused, or an engine with them claims and replays a key ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(optionsOf({ ttl: duration, staleAfter: duration }, false), async ({ options, given }) => {
        await judge(ps, check, () => runEngine(ps, { idempotency: options }), {
          names: given,
          accepted: async ({ tw: engine }) => {
            const ref = { scope: uniqueName("s"), key: "k", operation: "op" };
            const first = await outcome(() => engine.idempotency.run(ref, () => 1));
            const second = await outcome(() => engine.idempotency.run(ref, () => 2));
            if (!first.ok) throw new Error(`an engine with ${fc.stringify(options)} refused a plain key: ${first.error.message}`);
            if (!second.ok) throw new Error(`an engine with ${fc.stringify(options)} refused a plain key run again: ${second.error.message}`);
            if (second.value !== 1) throw new Error(`an engine with ${fc.stringify(options)} ran one key twice (replayed ${second.value})`);
          },
        });
      }),
      check,
    );
  });
});
