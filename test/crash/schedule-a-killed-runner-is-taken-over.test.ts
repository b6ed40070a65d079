import { describe, expect, it } from "vitest";
import { sleep } from "./fixtures/crash-job.js";
import { eventually } from "./fixtures/processes.js";
import { scheduleHarness } from "./fixtures/schedule-harness.js";

/**
 * Seed 003's single writer survives a killed runner. Three processes on PostgreSQL run a task every
 * 1s whose runs take 5 s, with a 2 s run lease. The process running a slot is SIGKILLed mid-run: its
 * heartbeat (every lease / 4) stops, so its lease lapses at most one lease after the kill, and the
 * next schedule tick of a live process (at most one slot, 1 s, later) takes the same slot over. So
 * the taken-over run starts within lease + 1 s of the kill; the test allows lease + 2 s.
 *
 * Meanwhile, with overlap "skip" (the default), every slot that comes due while a run holds the
 * lease is skipped, not run beside it: across all processes no two runs overlap in time.
 */

const LEASE_MS = 2_000;
const WORK_MS = 5_000;
const TICK_MS = 1_000;
const SLACK_MS = 1_000;
const TASK = "long-run";

describe("a runner killed mid-run on PostgreSQL", () => {
  const setup = scheduleHarness();

  it("has its slot taken over by another process within lease + 2 s, and no runs overlap", async () => {
    const s = await setup({ name: TASK, every: "1s", lease: `${LEASE_MS}ms`, workMs: WORK_MS });
    await s.startRunners(3);

    // The process running a slot, as its start row and the task's lease both say.
    const first = await eventually(async () => (await s.runs.rows()).find((r) => r.phase === "start"), "a run to start", 20_000, 50);
    const victim = s.runners.byPid(first.pid);
    const held = await s.runs.taskRow(TASK);
    expect(held).toMatchObject({ runningBy: victim.instanceId, runningSlot: first.slot });

    // Mid-run, after a heartbeat or two have renewed the lease.
    await sleep(first.at + 700 - Date.now());
    const killedAt = Date.now();
    await victim.kill();
    // Let a heartbeat the victim sent just before dying land, then read the lease it left.
    await sleep(150);
    const left = await s.runs.taskRow(TASK);
    expect(left.runningBy).toBe(victim.instanceId);
    const leaseEnd = left.runningUntil!;
    expect(leaseEnd - killedAt).toBeLessThanOrEqual(LEASE_MS);

    // Another process starts the same slot once the lease has lapsed.
    const taken = await eventually(
      async () => (await s.runs.rows()).find((r) => r.phase === "start" && r.slot === first.slot && r.pid !== victim.pid),
      "another process to start the killed run's slot",
      LEASE_MS + TICK_MS + SLACK_MS + 10_000,
      20,
    );
    const takeoverMs = taken.at - killedAt;
    expect(taken.at, "taken over before the dead runner's lease lapsed").toBeGreaterThan(leaseEnd);
    expect(takeoverMs, `taken over ${takeoverMs} ms after the kill`).toBeLessThanOrEqual(LEASE_MS + TICK_MS + SLACK_MS);
    const taker = s.runners.byPid(taken.pid);
    const event = await taker.waitFor((l) => l.event === "task.run_taken_over", "task.run_taken_over", 1_000);
    expect(event).toMatchObject({ task: TASK, scheduledAt: first.slot, previousRunner: victim.instanceId });
    for (const other of s.runners.alive.filter((r) => r !== taker)) expect(other.named("task.run_taken_over")).toEqual([]);

    // The taken-over run finishes, in the process that took it over.
    await eventually(
      async () => (await s.runs.rows()).some((r) => r.phase === "finish" && r.slot === first.slot && r.pid === taker.pid),
      "the taken-over run to finish",
      WORK_MS + 5_000,
      50,
    );

    // ...and is recorded as the task's last run. The slots that came due meanwhile (about one per
    // second for lease + work) were skipped.
    const status = await eventually(
      async () => (await s.observer.scheduler.status()).tasks.find((t) => t.name === TASK && t.lastScheduledAt !== null),
      "the taken-over run to be recorded",
      5_000,
      50,
    );
    expect(status).toMatchObject({ lastScheduledAt: first.slot, lastOutcome: "succeeded" });
    expect(status.overlapsSkipped).toBeGreaterThanOrEqual(4);
    await s.runners.killAll();
    const skippedEvents = s.runners.all.flatMap((r) => r.named("task.overlap_skipped"));
    expect(skippedEvents.length).toBeGreaterThan(0);
    expect(skippedEvents.length).toBeLessThanOrEqual((await s.runs.taskRow(TASK)).overlapsSkipped);

    // No two runs overlapped, in any process: each started after the one before ended (the killed
    // run ended at the kill). Only the killed run, and a run still going at the end, lack a finish.
    const spans = await s.runs.spans();
    expect(spans.filter((r) => r.slot === first.slot).map((r) => r.pid)).toEqual([victim.pid, taker.pid]);
    const ends = spans.map((r) => r.finishedAt ?? (r.pid === victim.pid && r.slot === first.slot ? killedAt : Number.POSITIVE_INFINITY));
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]!.startedAt, `run of ${new Date(spans[i]!.slot).toISOString()} started before the previous run ended`).toBeGreaterThanOrEqual(ends[i - 1]!);
    }
    expect(ends.slice(0, -1).every(Number.isFinite)).toBe(true);

    console.info(`killed pid ${victim.pid} ${killedAt - first.at} ms into its run; lease left at the kill ${leaseEnd - killedAt} ms; pid ${taker.pid} took the slot over ${takeoverMs} ms after the kill (${taken.at - leaseEnd} ms after the lease lapsed); ${status.overlapsSkipped} slots skipped as overlaps`);
  }, 60_000);
});
