import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

/** Seed 002's composite primary key (account_id, request_id, operation), and its optional requestId. */
describe.each(allStoreCases())("keys are scoped by (scope, key, operation) ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("the same key reused across operations and scopes runs once for each, and each replays its own result", async () => {
    const { tw } = await engine();
    const ran: string[] = [];
    const call = (scope: string, operation: string) =>
      tw.idempotency.run({ scope, key: "req-1", operation }, async () => {
        ran.push(`${scope} ${operation}`);
        return { success: true, by: `${scope} ${operation}` };
      });
    const combos = [
      ["acct-1", "OPEN_POSITION"],
      ["acct-1", "CLOSE_POSITION"],
      ["acct-2", "OPEN_POSITION"],
      ["acct-2", "CLOSE_POSITION"],
    ] as const;

    for (const [scope, operation] of combos) expect(await call(scope, operation)).toEqual({ success: true, by: `${scope} ${operation}` });
    expect(ran).toEqual(combos.map(([s, o]) => `${s} ${o}`));

    // Replays: each combination answers with its own result, and nothing runs again.
    for (const [scope, operation] of [...combos].reverse()) expect(await call(scope, operation)).toEqual({ success: true, by: `${scope} ${operation}` });
    expect(ran).toHaveLength(4);
    expect((await tw.idempotency.list("acct-1")).map((r) => r.operation).sort()).toEqual(["CLOSE_POSITION", "OPEN_POSITION"]);
    expect((await tw.idempotency.list("acct-2")).map((r) => r.operation).sort()).toEqual(["CLOSE_POSITION", "OPEN_POSITION"]);
  });

  it("without a key (absent, null or empty) the operation runs every time and nothing is written", async () => {
    const { tw, events } = await engine();
    let runs = 0;
    const before = events.length;
    for (const key of [undefined, null, ""]) {
      for (let i = 0; i < 3; i++) {
        expect(await tw.idempotency.run({ scope: "acct-1", key, operation: "OPEN_POSITION" }, async () => ({ success: true, n: ++runs }))).toEqual({ success: true, n: runs });
      }
    }
    expect(runs).toBe(9);
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    // Not even a log line: the store is never touched.
    expect(events.slice(before).filter((e) => e.event.startsWith("idempotency."))).toEqual([]);
  });

  it("a failure without a key is rethrown as it is", async () => {
    const { tw } = await engine();
    await expect(tw.idempotency.run({ scope: "acct-1", operation: "OPEN_POSITION" }, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
  });
});
