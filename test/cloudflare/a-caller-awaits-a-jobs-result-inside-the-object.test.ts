import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { startObjects, type Objects } from "./support/objects.js";

/**
 * enqueueAndWait over Workers RPC: the job runs in the object's own alarm tick, which tells the
 * waiter inside the object; the caller in the Worker gets the result, or the job's failure.
 */
describe.concurrent("enqueueAndWait inside a Durable Object", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  it("answers with the job's result once the alarm tick ran it, and the job is stored as succeeded", async () => {
    const result = await objects.call("WORKER", "waits", "enqueueAndWait", "square", { n: 12 }, { timeout: "20s" });
    expect(result).toEqual({ square: 144 });
    const status = await objects.call<ObjectStatus>("WORKER", "waits", "status");
    expect(status.queues.find((q) => q.queue === "square")?.counts).toMatchObject({ succeeded: 1, pending: 0, running: 0 });
    // Several callers at once: each gets its own job's result.
    const many = await Promise.all([1, 2, 3, 4].map((n) => objects.call("WORKER", "waits", "enqueueAndWait", "square", { n }, { timeout: "20s" })));
    expect(many).toEqual([{ square: 1 }, { square: 4 }, { square: 9 }, { square: 16 }]);
  });

  it("a delayed job is awaited until its alarm, not answered early", async () => {
    const started = Date.now();
    const result = await objects.call("WORKER", "delayed", "enqueueAndWait", "square", { n: 3 }, { delay: "1s", timeout: "20s" });
    expect(result).toEqual({ square: 9 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("rejects with the job's failure once it failed for good", async () => {
    const call = objects.call("WORKER", "failing", "enqueueAndWait", "refuse", { n: 7 }, { timeout: "20s" });
    // Workers RPC keeps an error's message, not its class: the message starts with the class's name.
    await expect(call).rejects.toThrow(/^JobFailedError: .*cannot take 7/);
  });

  it("gives up at its timeout while the job goes on waiting for its time", async () => {
    const call = objects.call("WORKER", "late", "enqueueAndWait", "square", { n: 5 }, { delay: "1h", timeout: "300ms" });
    await expect(call).rejects.toThrow(/^JobWaitTimeoutError: /);
    const status = await objects.call<ObjectStatus>("WORKER", "late", "status");
    expect(status.queues.find((q) => q.queue === "square")?.counts).toMatchObject({ pending: 1 });
  });

  it("refuses a bad timeout before anything is written", async () => {
    await expect(objects.call("WORKER", "refused", "enqueueAndWait", "square", { n: 1 }, { timeout: "soon" })).rejects.toThrow(/enqueueAndWait: timeout must be a duration/);
    const status = await objects.call<ObjectStatus>("WORKER", "refused", "status");
    expect(status.queues.find((q) => q.queue === "square")).toBeUndefined();
  });
});
