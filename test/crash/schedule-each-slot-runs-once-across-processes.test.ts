import { describe, expect, it } from "vitest";
import { eventually } from "./fixtures/processes.js";
import { scheduleHarness } from "./fixtures/schedule-harness.js";

/**
 * Seed 003's single-writer guarantee, with real processes on PostgreSQL: three processes each run
 * an engine with `tw.start()` and define the same task, every 1s (the shortest cadence). No process
 * is elected; each slot is claimed by one conditional update of the task's row. Every run writes
 * (slot, pid) through a connection of its own, with no unique constraint, so a slot run twice would
 * show up as two rows rather than as a failed insert.
 *
 * This is a real-time system test: the schedule runs on the wall clock, and the test waits (with a
 * deadline) for a number of slots to be recorded rather than sleeping a fixed time.
 */

const SLOTS = 9;
const EVERY_MS = 1_000;

describe("a task every 1s in three processes on PostgreSQL", () => {
  const setup = scheduleHarness();

  it("runs each slot exactly once, consecutive seconds with no gap", async () => {
    const s = await setup({ name: "each-second", every: "1s", workMs: 0 });
    const runners = await s.startRunners(3);

    // The task's first slot is the first after it was defined; then one run per second.
    await eventually(
      async () => {
        const slots = new Set((await s.runs.rows()).filter((r) => r.phase === "finish").map((r) => r.slot));
        return slots.size >= SLOTS;
      },
      `${SLOTS} slots to be run and finished`,
      30_000,
      100,
    );
    // Stop every process before reading, so no run is half-recorded while the rows are checked.
    await s.runners.killAll();

    const rows = await s.runs.rows();
    const starts = rows.filter((r) => r.phase === "start");
    const slots = starts.map((r) => r.slot).sort((a, b) => a - b);

    // No slot ran twice, in any process.
    const twice = slots.filter((slot, i) => slots[i - 1] === slot);
    expect(twice, `slots run more than once: ${twice.map((t) => new Date(t).toISOString()).join(", ")}`).toEqual([]);

    // Whole seconds, one after another from the first: no slot was skipped.
    for (const slot of slots) expect(slot % EVERY_MS).toBe(0);
    const gaps = slots.slice(1).map((slot, i) => slot - slots[i]!);
    expect(gaps, "the distance between consecutive slots").toEqual(gaps.map(() => EVERY_MS));
    expect(slots.length).toBeGreaterThanOrEqual(SLOTS);

    // Every run that started finished, in the process that started it (but the last, which the kill
    // may have cut short).
    for (const start of starts.filter((x) => x.slot !== slots.at(-1))) {
      expect(rows.filter((r) => r.phase === "finish" && r.slot === start.slot).map((r) => r.pid), `the finish of ${new Date(start.slot).toISOString()}`).toContain(start.pid);
    }
    // Only the runner processes ran the task (the observer engine in this process never does).
    const pids = new Set(runners.map((r) => r.pid));
    for (const start of starts) expect(pids.has(start.pid)).toBe(true);

    // Which process won each slot is up to the database; report the spread and lateness.
    const perProcess = runners.map((r) => starts.filter((x) => x.pid === r.pid).length);
    const late = starts.map((x) => x.at - x.slot).sort((a, b) => a - b);
    console.info(`${slots.length} slots; runs per process: ${perProcess.join(" / ")}; start lateness ms: min ${late[0]}, median ${late[Math.floor(late.length / 2)]}, max ${late.at(-1)}`);
  }, 60_000);
});
