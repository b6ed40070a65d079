import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { postgresCase, wrapQueueOperation } from "../support/stores.js";
import { deferred, realEngines, type Deferred } from "../support/real-time.js";

/**
 * Regression: `tw.stop()` closed the pool while a maintenance pass (rescue, prune) or an idle
 * worker's next-wake-up query was still on its way; the statement then failed on the ended pool and
 * the engine logged a `store.error` for a clean shutdown (seen once in a side-by-side run). The
 * store here is real; the named operation is only held at the door until the test lets it through.
 */
function holding(store: Store, operation: "rescueExpired" | "nextWakeAt"): { store: Store; entered: Deferred; door: Deferred; done: Deferred; arm: () => void } {
  const entered = deferred();
  const door = deferred();
  const done = deferred();
  let armed = false;
  const wrapped = wrapQueueOperation(store, operation, (real) => {
    const call = real as (...args: unknown[]) => Promise<unknown>;
    return (async (...args: unknown[]) => {
      if (!armed) return call(...args);
      armed = false;
      entered.resolve();
      await door.promise;
      try {
        return await call(...args);
      } finally {
        done.resolve();
      }
    }) as typeof real;
  });
  return { store: wrapped, entered, door, done, arm: () => (armed = true) };
}

/**
 * Calls stop() while the held operation waits at the door, gives stop() a moment it must not finish
 * in, then opens the door: stop() resolves only after the operation came back, and nothing failed.
 */
async function stopWhileHeld(stop: () => Promise<void>, held: { door: Deferred; done: Deferred }): Promise<string[]> {
  const order: string[] = [];
  const stopping = stop().then(() => order.push("stopped"));
  void held.done.promise.then(() => order.push("operation returned"));
  await new Promise((resolve) => setTimeout(resolve, 50));
  order.push("door opened");
  held.door.resolve();
  await Promise.all([stopping, held.done.promise]);
  return order;
}

describe("PostgreSQL: stop() with store work in flight", () => {
  const c = postgresCase();
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("waits for a maintenance pass to come back before it closes the store", async () => {
    const { store, entered, arm, ...held } = holding(c.make(), "rescueExpired");
    const { tw, named } = await engine({ store, rescueInterval: "20ms" });
    tw.queue("mail", { handler: () => {} });
    await tw.start();
    arm();
    await entered.promise;

    expect(await stopWhileHeld(() => tw.stop(), held)).toEqual(["door opened", "operation returned", "stopped"]);
    expect(named("store.error")).toEqual([]);
  });

  it("waits for an idle worker's next-wake-up query to come back before it closes the store", async () => {
    const { store, entered, arm, ...held } = holding(c.make(), "nextWakeAt");
    arm();
    const { tw, named } = await engine({ store });
    tw.queue("mail", { handler: () => {} });
    await tw.start();
    // The worker's first claim finds nothing; it then asks when to wake up next.
    await entered.promise;

    expect(await stopWhileHeld(() => tw.stop(), held)).toEqual(["door opened", "operation returned", "stopped"]);
    expect(named("store.error")).toEqual([]);
  });
});
