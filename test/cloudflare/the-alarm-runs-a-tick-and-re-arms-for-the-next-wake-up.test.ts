import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LastTick, ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import { startObjects, type LoggedEntry, type Objects } from "./support/objects.js";

const ticks = (entries: LoggedEntry[]) => entries.filter((e) => e.message === "alarm.tick").map((e) => e.context as unknown as LastTick);

describe.concurrent("alarm(): one engine tick, then the alarm re-armed for the engine's next wake-up", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  it("fires, runs the due task, and re-arms for the next slot, again and again", async () => {
    const first = await objects.call<ObjectStatus>("TICKER", "a", "status");
    // The first call found no alarm (a new object) and armed one.
    expect(first.alarmAt).not.toBeNull();
    expect((await objects.logs("ticker", "Ticker:a")).find((e) => e.message === "alarm.armed")).toBeDefined();
    const status = await eventually(async () => {
      const s = await objects.call<ObjectStatus>("TICKER", "a", "status");
      return s.tasks[0]!.runs >= 2 && s;
    }, "two runs of a task every second", 10_000);
    expect(status.tasks[0]).toMatchObject({ name: "heartbeat", lastOutcome: "succeeded", consecutiveFailures: 0 });
    const tick = status.lastTick!;
    // Re-armed at the next slot: the next whole second after the tick, not the 5-minute ceiling.
    expect(tick.alarmAt).toBe(tick.nextWakeAt);
    expect(tick.alarmAt).toBeGreaterThan(tick.at);
    expect(tick.alarmAt - tick.at).toBeLessThanOrEqual(1_000);
    const logged = ticks(await objects.logs("ticker", "Ticker:a"));
    expect(logged.length).toBeGreaterThanOrEqual(2);
  });

  it("with nothing due, the alarm waits for the steady-state ceiling (10m here), never for nothing", async () => {
    const { lastTick } = await eventually(async () => {
      const s = await objects.call<ObjectStatus>("WORKER", "idle", "status");
      return s.lastTick !== null && s;
    }, "the first tick", 20_000);
    expect(lastTick!.nextWakeAt).toBeNull();
    expect(lastTick!.alarmAt - (lastTick!.at + lastTick!.durationMs)).toBe(10 * 60_000);
  });

  it("a backlog beyond maxJobsPerTick (5) is carried over at 100 ms until done, every job run once", async () => {
    await objects.call("WORKER", "backlog", "status");
    await objects.call("WORKER", "backlog", "backlog", 12);
    const done = await eventually(async () => {
      const d = await objects.call<number[]>("WORKER", "backlog", "done");
      return d.length >= 12 && d;
    }, "12 jobs done", 10_000);
    expect(done).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const logged = ticks(await objects.logs("worker", "Worker:backlog")).filter((t) => t.ran > 0);
    expect(logged.every((t) => t.ran <= 5)).toBe(true);
    expect(logged.map((t) => t.ran)).toEqual([5, 5, 2]);
    const carried = logged.slice(0, 2);
    // Carried over: the next alarm 100 ms after the tick ended.
    for (const t of carried) expect(t.alarmAt - (t.at + t.durationMs)).toBe(100);
    const last = logged.at(-1)!;
    expect(last.alarmAt - (last.at + last.durationMs)).toBe(10 * 60_000);
  });

  it("enqueue brings the alarm forward to a job's due time but never pushes a sooner alarm back", async () => {
    const idle = await eventually(async () => {
      const s = await objects.call<ObjectStatus>("WORKER", "forward", "status");
      return s.lastTick !== null && s;
    }, "the first tick", 20_000);
    const ceilingAlarm = idle.alarmAt!;

    await objects.call("WORKER", "forward", "enqueue", "work", { n: 1 }, { delay: "1h" });
    expect((await objects.call<ObjectStatus>("WORKER", "forward", "status")).alarmAt).toBe(ceilingAlarm);

    const soon = await objects.call<{ runAt: number }>("WORKER", "forward", "enqueue", "work", { n: 2 }, { delay: "1500ms" });
    expect((await objects.call<ObjectStatus>("WORKER", "forward", "status")).alarmAt).toBe(soon.runAt);
    await eventually(async () => (await objects.call<number[]>("WORKER", "forward", "done")).includes(2), "the job due in 1.5 s to run", 10_000);
  });
});
