import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LastTick, ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import { startObjects, type Objects } from "./support/objects.js";

describe.concurrent("failures: a task's is its own, a transport failure throws and the platform retries the alarm", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  /** A new object's first alarm (armed by its first call) has run: breaking the storage now fails a later tick, not that one. */
  const firstTick = (binding: string, object: string) =>
    eventually(async () => (await objects.call<ObjectStatus>(binding, object, "status")).lastTick !== null, `the first tick of ${object}`, 20_000);

  const named = async (appId: string, object: string, message: string) => (await objects.logs(appId, object)).filter((e) => e.message === message);

  it("a task that always fails does not stop the other: both run every tick, the failure is logged and counted, the alarm is never retried", async () => {
    const status = await eventually(async () => {
      const s = await objects.call<ObjectStatus>("ISOLATED", "a", "status");
      return s.tasks.every((t) => t.runs >= 2) && s;
    }, "two runs of each task", 10_000);
    const [sweep, tenero] = [status.tasks.find((t) => t.name === "sweep")!, status.tasks.find((t) => t.name === "tenero")!];
    expect(sweep).toMatchObject({ lastOutcome: "succeeded", lastResult: { scanned: 3 }, consecutiveFailures: 0 });
    expect(tenero).toMatchObject({ lastOutcome: "failed", lastError: expect.stringContaining("Tenero answered 503") });
    expect(tenero.consecutiveFailures).toBeGreaterThanOrEqual(2);
    const failed = await named("isolated", "Isolated:a", "task.failed");
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed[0]!.context).toMatchObject({ task: "tenero", level: "error", error: expect.stringContaining("Tenero answered 503") });
    expect(await named("isolated", "Isolated:a", "alarm.failed")).toEqual([]);
    expect(status.lastTick!.retryCount).toBe(0);
  });

  it("a storage failure fails the tick, which throws; the platform retries the alarm and the retry's tick re-arms", async () => {
    await firstTick("FRAGILE", "retried");
    await objects.call("FRAGILE", "retried", "breakStorage");
    const [failure] = await eventually(async () => {
      const f = await named("fragile", "Fragile:retried", "alarm.failed");
      return f.length > 0 && f;
    }, "the tick to fail", 20_000);
    expect(failure!.context).toMatchObject({ retryCount: 0, retriesLeft: 6, error: expect.stringContaining("tickwork_tasks"), action: expect.stringContaining("retries") });
    await objects.call("FRAGILE", "retried", "repairStorage");

    // The platform's first retry comes about 2 s later; its tick succeeds and arms the next alarm. On a
    // loaded machine the repair may land after that retry already failed: then each retry before the
    // one that succeeded was logged as failed, with its own retryCount.
    const [tick] = await eventually(async () => {
      const t = (await named("fragile", "Fragile:retried", "alarm.tick")).map((e) => e.context as unknown as LastTick).filter((c) => c.retryCount > 0);
      return t.length > 0 && t;
    }, "the retried tick", 15_000);
    expect(tick!.retryCount).toBeGreaterThanOrEqual(1);
    const failedCounts = (await named("fragile", "Fragile:retried", "alarm.failed")).map((e) => e.context.retryCount);
    expect(failedCounts).toEqual(Array.from({ length: tick!.retryCount }, (_, i) => i));
    expect(tick!.alarmAt).toBeGreaterThan(tick!.at);
  });

  it("on the platform's last retry the object re-arms at the ceiling instead of throwing, so it keeps ticking after the outage", async () => {
    await firstTick("EXHAUSTED", "a");
    await objects.call("EXHAUSTED", "a", "breakStorage");
    const [exhausted] = await eventually(async () => {
      const e = await named("exhausted", "Exhausted:a", "alarm.retries_exhausted");
      return e.length > 0 && e;
    }, "the last retry", 15_000);
    expect(exhausted!.context).toMatchObject({ level: "critical", retryCount: 1, retriesLeft: 0 });
    const alarmAt = exhausted!.context.alarmAt as number;
    await objects.call("EXHAUSTED", "a", "repairStorage");
    // The alarm stands at the ceiling (10 minutes), not dropped.
    const { alarmAt: armed } = await objects.call<ObjectStatus>("EXHAUSTED", "a", "status");
    expect(armed).toBe(alarmAt);
    expect(alarmAt - Date.now()).toBeGreaterThan(9 * 60_000);
  });

  it("the watchdog: an RPC call that finds the alarm missing re-arms it at once", async () => {
    await firstTick("WORKER", "lost");
    await objects.call("WORKER", "lost", "loseAlarm");
    const { alarmAt } = await objects.call<ObjectStatus>("WORKER", "lost", "status");
    expect(alarmAt).not.toBeNull();
    // The first call armed the new object's alarm (info); this one found it lost (warn).
    const [armed] = await named("worker", "Worker:lost", "alarm.armed");
    expect(armed!.context).toMatchObject({ level: "info", reason: "the object's first call" });
    const [rearmed] = await named("worker", "Worker:lost", "alarm.rearmed");
    expect(rearmed!.context).toMatchObject({ level: "warn", reason: "missing", found: null });
  });

  it("the watchdog: an alarm stuck in the past longer than stuckAfter (1s here) is re-armed by the next call", async () => {
    await firstTick("FRAGILE", "stuck");
    const brokeAt = Date.now();
    await objects.call("FRAGILE", "stuck", "breakStorage");
    await eventually(async () => (await named("fragile", "Fragile:stuck", "alarm.failed")).length > 0, "the tick to fail", 20_000);
    // While the platform retries (from 2 s on, for minutes), the alarm keeps the time it failed at.
    // Once that is further back than stuckAfter, the next call re-arms it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, brokeAt + 1_100 - Date.now())));
    // The platform's own retries run on real time too; under load one may land between the wait and
    // the call, so each call (each runs the watchdog) is tried until the first re-arm is logged.
    const rearmed = await eventually(
      async () => {
        expect(await objects.call("FRAGILE", "stuck", "ping")).toBe("pong");
        return (await named("fragile", "Fragile:stuck", "alarm.rearmed"))[0];
      },
      "the watchdog to re-arm the stuck alarm",
      10_000,
    );
    expect(rearmed.context).toMatchObject({ reason: "stuck", found: expect.any(Number) });
    expect(rearmed.context.found as number).toBeLessThanOrEqual((rearmed.context.alarmAt as number) - 1_000);

    await objects.call("FRAGILE", "stuck", "repairStorage");
    await eventually(async () => (await objects.call<ObjectStatus>("FRAGILE", "stuck", "status")).lastTick !== null, "a tick once repaired", 10_000);
  });
});
