import { describe, expect, it } from "vitest";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, SECOND, T0, deferred, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

const row = async (engine: Engine) => (await engine.tw.store.schedule.loadTasks({ names: ["prices"] }))[0]!;

describe.each(allStoreCases())("a run whose runner died is taken over once its lease lapses ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a slot claimed with a lease by a runner that never finishes runs again, for the same scheduledAt, just after the lease", async () => {
    const engine = await engines.first({ instanceId: "survivor" });
    const { tw, clock, named } = engine;
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", lease: "1m", run: runs.record(() => "taken over") });
    // The task's row exists once the engine has looked at it.
    await tw.scheduler.status();

    // A runner claims the 00:05 slot with a 1-minute lease, then dies without a word.
    await clock.set(T0 + 5 * MINUTE);
    const claimed = await tw.store.schedule.claimSlot({
      name: "prices", slot: T0 + 5 * MINUTE, expectedLastSlot: T0, missed: 0, now: clock.now(), lease: { runner: "dead-runner", until: T0 + 6 * MINUTE },
    });
    expect(claimed).toBe(true);

    // While the lease holds, the slot is the dead runner's: nothing runs, and the tick wakes just after the lease.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 6 * MINUTE + 1);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ running: true, runs: 0 });
    await clock.set(T0 + 6 * MINUTE);
    await tw.tick();
    expect(runs.seen).toEqual([]);
    expect(named("task.run_taken_over")).toEqual([]);

    await clock.set(T0 + 6 * MINUTE + 1);
    await tw.tick();
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + 5 * MINUTE, at: T0 + 6 * MINUTE + 1, missed: 0, manual: false }]);
    expect(named("task.run_taken_over")).toEqual([
      expect.objectContaining({ level: "warn", task: "prices", scheduledAt: T0 + 5 * MINUTE, previousRunner: "dead-runner" }),
    ]);
    const status = (await tw.scheduler.status()).tasks[0]!;
    expect(status).toMatchObject({ running: false, runs: 1, lastScheduledAt: T0 + 5 * MINUTE, lastResult: "taken over" });
    expect(status.history[0]).toMatchObject({ scheduledAt: T0 + 5 * MINUTE, runner: "survivor" });
    expect(await row(engine)).toMatchObject({ runningBy: null, runningUntil: null, lastSlot: T0 + 5 * MINUTE });

    // Taken over once: ticking again does not rerun it, and the schedule goes on at 00:10.
    await tw.tick();
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE, T0 + 10 * MINUTE]);
    expect(named("task.run_taken_over")).toHaveLength(1);
  });

  it("a late tick after the lease lapsed takes the old slot over first, then runs the current slot at the next tick", async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", lease: "1m", run: runs.record() });
    await tw.scheduler.status();
    await clock.set(T0 + 5 * MINUTE);
    await tw.store.schedule.claimSlot({ name: "prices", slot: T0 + 5 * MINUTE, expectedLastSlot: T0, missed: 0, now: clock.now(), lease: { runner: "dead-runner", until: T0 + 6 * MINUTE } });

    await clock.set(T0 + 12 * MINUTE);
    await tw.tick();
    await tw.tick();
    expect(named("task.run_taken_over")).toHaveLength(1);
    expect(runs.seen.map((r) => [r.scheduledAt, r.at])).toEqual([
      [T0 + 5 * MINUTE, T0 + 12 * MINUTE],
      [T0 + 10 * MINUTE, T0 + 12 * MINUTE],
    ]);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("a live run keeps its lease by heartbeat and is not taken over ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("while the runner's heartbeat renews the lease, another engine ticking past the first lease does not take over", async () => {
    const a = await engines.first({ instanceId: "runner" });
    const b = await engines.another({ clock: a.clock, instanceId: "other" });
    const started = deferred();
    const gate = deferred();
    let signal: AbortSignal | undefined;
    let calls = 0;
    const run = async (ctx: { signal: AbortSignal }) => {
      calls++;
      signal = ctx.signal;
      started.resolve();
      await gate.promise;
      return "done";
    };
    a.tw.task("prices", { every: "5m", lease: "1m", run });
    b.tw.task("prices", { every: "5m", lease: "1m", run });

    await a.clock.set(T0 + 5 * MINUTE);
    const running = a.tw.tick();
    await started.promise;
    // Three minutes in 15-second steps (the heartbeat renews every quarter of the lease): after
    // each step, wait for the renewal's round trip to land, then let the other engine tick.
    for (let t = 15 * SECOND; t <= 3 * MINUTE; t += 15 * SECOND) {
      await a.clock.set(T0 + 5 * MINUTE + t);
      for (let turn = 0; (await row(a)).runningUntil !== a.clock.now() + MINUTE; turn++) {
        if (turn > 10_000) throw new Error(`the heartbeat did not renew the lease at +${t} ms`);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await b.tw.tick();
    }
    expect(b.named("task.run_taken_over")).toEqual([]);
    expect(a.named("task.lease_lost")).toEqual([]);
    expect(signal!.aborted).toBe(false);
    expect(await row(a)).toMatchObject({ runningBy: "runner", runningSlot: T0 + 5 * MINUTE });

    gate.resolve();
    await running;
    expect(calls).toBe(1);
    expect((await b.tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, running: false, lastResult: "done" });
  });
});
