import { describe, expect, it } from "vitest";
import type { QueueStore } from "../../src/queue/store.js";
import type { Store } from "../../src/store/store.js";
import { postgresCase } from "../support/stores.js";
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
  const inner = store.queue;
  const held = async (...args: unknown[]) => {
    if (!armed) return (inner[operation] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
    armed = false;
    entered.resolve();
    await door.promise;
    try {
      return await (inner[operation] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
    } finally {
      done.resolve();
    }
  };
  const queue = new Proxy(inner, { get: (target, property) => (property === operation ? held : Reflect.get(target, property)) }) as QueueStore;
  return { store: { ...store, queue }, entered, door, done, arm: () => (armed = true) };
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
