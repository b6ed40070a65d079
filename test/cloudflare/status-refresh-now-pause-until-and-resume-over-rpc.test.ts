import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnqueuedJob, RunResult } from "../../src/index.js";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import { startObjects, type Objects } from "./support/objects.js";

describe.concurrent("the object's RPC surface (seed 003), called by Workers RPC from a Worker", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  const status = (object: string) => objects.call<ObjectStatus>("OPERATED", object, "status");
  const runs = async (object: string, task: string) => (await status(object)).tasks.find((t) => t.name === task)!.runs;

  it("status() reports each task's runs and results, the queues, the alarm, the budget and the log sink", async () => {
    await eventually(async () => (await runs("status", "heartbeat")) >= 1, "a heartbeat", 20_000);
    const s = await status("status");
    expect(s).toMatchObject({
      store: "durableObject(Operated:status)",
      logSink: "workersLogs(operated)",
      alarmAt: expect.any(Number),
      tickBudget: 900,
      maxJobsPerTick: 900,
      pausedUntil: null,
      deliveries: [],
      fanouts: [],
    });
    expect(s.tasks.map((t) => t.name)).toEqual(["heartbeat", "prices"]);
    expect(s.tasks[0]).toMatchObject({ schedule: "every 1s", lastOutcome: "succeeded", lastResult: "beat", consecutiveFailures: 0, paused: false });
    expect(s.tasks[1]).toMatchObject({ schedule: "every 1h", runs: 0, lastRunAt: null });
  });

  it("refreshNow(task) runs that task now and returns its result; refreshNow('all') runs every task; an unknown task is refused by name", async () => {
    const [prices] = await objects.call<RunResult[]>("OPERATED", "refresh", "refreshNow", "prices");
    expect(prices).toMatchObject({ task: "prices", outcome: "succeeded", result: { refreshed: 3 } });
    const all = await objects.call<RunResult[]>("OPERATED", "refresh", "refreshNow", "all");
    expect(all.map((r) => r.task).sort()).toEqual(["heartbeat", "prices"]);
    expect(await runs("refresh", "prices")).toBe(2);
    await expect(objects.call("OPERATED", "refresh", "refreshNow", "tenero")).rejects.toThrow(/unknown task "tenero" \(defined: heartbeat, prices\)/);
  });

  it("pauseUntil(time) stops the scheduled runs until then; resume() starts them again at once", async () => {
    await eventually(async () => (await runs("pause", "heartbeat")) >= 1, "a heartbeat", 20_000);
    const until = Date.now() + 3_600_000;
    expect(await objects.call("OPERATED", "pause", "pauseUntil", until)).toEqual({ pausedUntil: until });
    const paused = await status("pause");
    expect(paused.pausedUntil).toBe(until);
    expect(paused.tasks.every((t) => t.paused && t.pausedUntil === until)).toBe(true);
    const before = paused.tasks[0]!.runs;
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const held = await status("pause");
    expect(held.tasks[0]!.runs).toBe(before);
    // Nothing runs until the pause ends: the alarm waits for the 10-minute ceiling, not every second.
    expect(held.alarmAt! - Date.now()).toBeGreaterThan(9 * 60_000);

    await objects.call("OPERATED", "pause", "resume");
    const resumed = await status("pause");
    expect(resumed.pausedUntil).toBeNull();
    expect(resumed.tasks.every((t) => !t.paused)).toBe(true);
    await eventually(async () => (await runs("pause", "heartbeat")) > before, "a heartbeat after resume", 20_000);
  });

  it("pauseUntil takes a duration too, and refuses what is not a time", async () => {
    const { pausedUntil } = await objects.call<{ pausedUntil: number }>("OPERATED", "pause-duration", "pauseUntil", "2h");
    expect(pausedUntil - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    await expect(objects.call("OPERATED", "pause-duration", "pauseUntil", "soon")).rejects.toThrow(/pauseUntil: invalid duration "soon"/);
  });

  it("enqueue(queue, payload, options) returns the job; an undeclared queue is refused by name", async () => {
    const job = await objects.call<EnqueuedJob>("OPERATED", "enqueue", "enqueue", "later", { to: "ada" }, { delay: "1h", key: "welcome:ada" });
    expect(job).toMatchObject({ queue: "later", payload: { to: "ada" }, status: "pending", key: "welcome:ada", duplicate: false });
    const again = await objects.call<EnqueuedJob>("OPERATED", "enqueue", "enqueue", "later", { to: "ada" }, { key: "welcome:ada" });
    expect(again).toMatchObject({ id: job.id, duplicate: true });
    expect((await status("enqueue")).queues).toEqual([{ queue: "later", counts: expect.objectContaining({ pending: 1 }) }]);
    await expect(objects.call("OPERATED", "enqueue", "enqueue", "emails", {})).rejects.toThrow(/unknown queue "emails"/);
  });

  it("an idempotent operation of the object runs once per key and replays its result", async () => {
    const first = await objects.call<{ orderId: string }>("OPERATED", "orders", "order", "req-1", 100);
    const replay = await objects.call<{ orderId: string }>("OPERATED", "orders", "order", "req-1", 999);
    expect(replay).toEqual(first);
    const other = await objects.call<{ orderId: string }>("OPERATED", "orders", "order", "req-2", 5);
    expect(other.orderId).not.toBe(first.orderId);
    expect(await objects.call("OPERATED", "orders", "ordersPlaced")).toBe(2);
  });

  it("idempotent() over RPC: a caller in the Worker passes its function, the object calls it back once per key", async () => {
    const hit = async (key: string) => (await objects.mf.dispatchFetch(`http://objects/idempotent-callback?key=${key}&object=callbacks`)).json();
    const first = (await hit("reset-1")) as { result: { run: number }; callbackRuns: number };
    const again = (await hit("reset-1")) as { result: { run: number }; callbackRuns: number };
    expect(again.result).toEqual(first.result);
    expect(again.callbackRuns).toBe(first.callbackRuns);
  });

  it("idempotent() inside the object: the operation's signal aborts when another execution takes the claim, and the call ends with the loss", async () => {
    const call = objects.call("OPERATED", "lost-inside", "orderThatLosesItsClaim", "order-9");
    await expect(call).rejects.toThrow(/another execution took over this execution's claim/);
    expect(await objects.call("OPERATED", "lost-inside", "lostOperationSaw")).toEqual({ aborted: true, reason: "IdempotencyClaimLostError" });
    const logs = (await objects.logs("operated")).filter((e) => e.message === "idempotency.claim_lost");
    expect(logs.map((e) => e.context)).toContainEqual(expect.objectContaining({ key: "order-9", detectedBy: "renewal" }));
  });

  it("idempotentCall() from the Worker: the function runs in the Worker and its own signal aborts, with IdempotencyClaimLostError, when the object finds the claim lost", async () => {
    const answer = (await (await objects.mf.dispatchFetch("http://objects/idempotent-call-loses-its-claim?key=reset-9")).json()) as { seen?: { aborted: boolean; reason: string }; error: string | null };
    expect(answer.seen).toEqual({ aborted: true, reason: "IdempotencyClaimLostError" });
    expect(answer.error).toMatch(/another execution took over this execution's claim/);
  });

  it("idempotent() refuses an onLost without a lost(message) method, naming it, before anything is claimed", async () => {
    const answer = (await (await objects.mf.dispatchFetch("http://objects/idempotent-bad-listener")).json()) as { error: string | null };
    expect(answer.error).toMatch(/idempotent: onLost must be an object with a lost\(message\) method/);
  });
});
