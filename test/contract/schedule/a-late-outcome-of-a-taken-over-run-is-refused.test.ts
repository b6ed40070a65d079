import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a run taken over by another process ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  // A runner frozen (not killed) past its lease: another process takes the slot over and records it.
  // When the frozen one wakes and finishes, its outcome must not count: no second history entry, no
  // failure towards the breaker, no backoff.
  it("records nothing when it finishes late, and says so", async () => {
    const { tw, clock, named } = await engine();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    tw.task("sweep", {
      every: "5m",
      lease: "1m",
      breaker: { after: 1 },
      run: async () => {
        await gate;
        throw new Error("late failure");
      },
    });
    await tw.tick();
    await clock.set(T0 + 5 * MINUTE);
    const tick = tw.tick();
    await expect.poll(async () => (await tw.scheduler.status()).tasks[0]?.running).toBe(true);
    const [row] = await tw.store.schedule.loadTasks({ names: ["sweep"] });
    // Another process, seeing the lease lapsed, takes the run over.
    const slot = await tw.store.schedule.takeOver({ name: "sweep", runner: "other-process", until: row!.runningUntil! + 10 * MINUTE, now: row!.runningUntil! + 1 });
    expect(slot).toBe(T0 + 5 * MINUTE);

    open();
    await tick;
    expect(named("task.outcome_refused")).toEqual([expect.objectContaining({ task: "sweep", outcome: "failed" })]);
    expect(named("task.failed")).toEqual([]);
    const [status] = (await tw.scheduler.status()).tasks;
    expect(status).toMatchObject({ consecutiveFailures: 0, breakerOpen: false, runs: 0, history: [] });
  });
});
