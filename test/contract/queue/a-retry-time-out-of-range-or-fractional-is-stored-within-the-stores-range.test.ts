import { describe, expect, it } from "vitest";
import { MAX_TIME_MS } from "../../../src/core/bounds.js";
import { RetryAfterError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a retry time chosen by a handler or a backoff is stored within the store's range ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  const cases: [string, { error?: () => unknown; backoff?: () => number }, number][] = [
    ["retryAfter 1e300 ms waits until the end of year 9999", { error: () => new RetryAfterError("later", 1e300) }, MAX_TIME_MS],
    ["retryAfter at a Date past year 9999 waits until the end of year 9999", { error: () => new RetryAfterError("later", new Date(8.64e15)) }, MAX_TIME_MS],
    ["a backoff of 1e300 ms waits until the end of year 9999", { backoff: () => 1e300 }, MAX_TIME_MS],
    ["a fractional backoff (1.6 ms) is rounded to whole milliseconds", { backoff: () => 1.6 }, T0 + 2],
    ["a fractional retryAfter (2.4 ms) is rounded to whole milliseconds", { error: () => new RetryAfterError("soon", 2.4) }, T0 + 2],
  ];

  for (const [name, { error = () => new Error("down"), backoff = () => 1_000 }, at] of cases) {
    it(name, async () => {
      const { tw, named } = await engine();
      const q = tw.queue("api", {
        retry: { maxAttempts: 3, backoff },
        handler: (_job, ctx) => {
          if (ctx.attempt === 1) throw error();
        },
      });
      const { id } = await q.enqueue({});

      expect((await tw.tick()).ran).toBe(1);

      expect(named("store.error")).toEqual([]);
      expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 1, runAt: at });
    });
  }
});
