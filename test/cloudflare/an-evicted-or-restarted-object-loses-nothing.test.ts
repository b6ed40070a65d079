import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EnqueuedJob, RunResult } from "../../src/index.js";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import { startObjects, type Objects } from "./support/objects.js";

/**
 * What the seeds say must survive an eviction, in the store: each task's runs, results and failure
 * counts and a pause (seed 003), queued jobs, idempotency keys with their results (seed 002), cached
 * values; and the alarm itself, which the platform keeps. What the instance held in memory (its last
 * tick) is gone, as it may be.
 */
describe("a new instance of the object on the same storage loses nothing that must survive", () => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-do-"));
  let objects: Objects | undefined;
  afterAll(async () => {
    await objects?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const prepare = async (o: Objects, name: string) => {
    const call = <T>(method: string, ...args: unknown[]) => o.call<T>("OPERATED", name, method, ...args);
    await eventually(async () => (await call<ObjectStatus>("status")).tasks[0]!.runs >= 1, "a heartbeat", 20_000);
    const [prices] = await call<RunResult[]>("refreshNow", "prices");
    const job = await call<EnqueuedJob>("enqueue", "later", { to: "ada" }, { delay: "1h", key: "welcome:ada" });
    const order = await call<{ orderId: string }>("order", "req-1", 100);
    await call("cachePut", "tenero:price:stx", { price: 1.25 });
    const until = Date.now() + 3_600_000;
    await call("pauseUntil", until, "prices");
    const before = await call<ObjectStatus>("status");
    return { call, prices: prices!, job, order, until, before };
  };

  /** `gone`: when the old instance was dropped (before the eviction or the restart). */
  const expectSurvived = async (call: <T>(method: string, ...args: unknown[]) => Promise<T>, saved: Awaited<ReturnType<typeof prepare>>, gone: number) => {
    const after = await call<ObjectStatus>("status");
    // The old instance's last tick is gone. The heartbeat's alarm (every second) may already have
    // run on the new instance before this call, so a tick of its own may be there.
    if (after.lastTick !== null) expect(after.lastTick.at).toBeGreaterThanOrEqual(gone);
    const prices = after.tasks.find((t) => t.name === "prices")!;
    expect(prices).toMatchObject({ runs: 1, lastResult: { refreshed: 3 }, lastScheduledAt: saved.prices.scheduledAt, paused: true, pausedUntil: saved.until });
    expect(prices.history).toHaveLength(1);
    expect(after.tasks.find((t) => t.name === "heartbeat")!.runs).toBeGreaterThanOrEqual(saved.before.tasks.find((t) => t.name === "heartbeat")!.runs);
    expect(after.queues).toEqual([{ queue: "later", counts: expect.objectContaining({ pending: 1 }) }]);
    expect(await call("enqueue", "later", { to: "ada" }, { key: "welcome:ada" })).toMatchObject({ id: saved.job.id, duplicate: true });
    expect(await call("order", "req-1", 555)).toEqual(saved.order);
    expect(await call("ordersPlaced")).toBe(1);
    expect(await call("cacheGet", "tenero:price:stx")).toEqual({ price: 1.25 });
    expect(after.alarmAt).not.toBeNull();
  };

  it("after an eviction (the runtime drops the instance), the next call's new instance finds everything", async () => {
    objects = await startObjects();
    const saved = await prepare(objects, "evicted");
    const gone = Date.now();
    await expect(saved.call("evict")).rejects.toThrow("evicted by the test");
    await expectSurvived(saved.call, saved, gone);
    // Two instances, two engines: the second announced itself (and its sink) again. Log entries reach
    // the log service a moment after they are written, later still on a loaded machine.
    // On a miss the failure names what the log service did hold, to tell a late entry from a lost one.
    let seen: string[] = [];
    const started = await eventually(async () => {
      const logged = await objects!.logs("operated", "Operated:evicted");
      seen = logged.map((e) => `${e.message}@${String(e.context.instanceId)}`);
      const entries = logged.filter((e) => e.message === "engine.started");
      return entries.length >= 2 && entries;
    }, "the new instance's engine.started", 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; the log service held: ${seen.join(", ")}`);
    });
    expect(started).toHaveLength(2);
    expect(started[1]!.context.instanceId).not.toBe(started[0]!.context.instanceId);
  }, 150_000);

  it("after workerd itself restarts on the same storage directory, a new process's instance finds everything", async () => {
    await objects?.dispose();
    objects = await startObjects({ persist: dir });
    const saved = await prepare(objects, "restarted");
    await objects.dispose();
    const gone = Date.now();
    objects = await startObjects({ persist: dir });
    await expectSurvived((method, ...args) => objects!.call("OPERATED", "restarted", method, ...args), saved, gone);
  }, 90_000);
});
