import { describe, expect, it } from "vitest";
import { eventually, realEngines } from "../../support/real-time.js";
import { allStoreCases } from "../../support/stores.js";
import { HOUR, MINUTE, enginesFor, type Engine } from "../../support/schedule-fixtures.js";

/**
 * Besides a fixed interval, a fan-out's reconciliation can follow a periodic task (`{ after: "crawl" }`:
 * right after each run of it) or be chosen by a function at the end of each round and after each
 * task run: the seed reconciles on the crawler's hourly alarm while the crawler is enabled and on its
 * own 15-minute interval otherwise.
 */
describe.each(allStoreCases())("a fan-out's reconciliation plan ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  function recorder({ clock }: Engine) {
    const pushes: { target: string; at: number }[] = [];
    const send = async (target: unknown) => void pushes.push({ target: target as string, at: clock.now() });
    /** The times (from t0) at which pushes went out. */
    const rounds = (t0: number) => [...new Set(pushes.map((p) => p.at - t0))];
    return { pushes, send, rounds };
  }

  it("{ after: task } reconciles right after each run of the task, whatever its outcome, and has no interval of its own", async () => {
    const engine = await engines.first();
    const { tw, clock } = engine;
    const { send, rounds, pushes } = recorder(engine);
    let crawls = 0;
    tw.task("crawl", {
      every: "1h",
      run: () => {
        if (++crawls === 2) throw new Error("the crawl failed");
      },
    });
    const symbols = tw.fanout<string[]>("symbols", { reconcile: { after: "crawl" }, groups: { alerts: { targets: ["alert-1", "alert-2"] } }, send });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    const first = await tw.tick();
    // The next wake-up is the task's, not a reconciliation's.
    expect(first.nextWakeAt).toBe(t0 + HOUR);
    expect(await symbols.status()).toMatchObject({ nextAt: null, nextReason: null, converged: true });

    await clock.set(t0 + 45 * MINUTE);
    expect((await tw.tick()).outbound.used).toBe(0);
    for (const hour of [1, 2]) {
      await clock.set(t0 + hour * HOUR);
      const result = await tw.tick();
      expect(result.outbound.used, `hour ${hour}`).toBe(2);
      expect(result.nextWakeAt).toBe(t0 + (hour + 1) * HOUR);
    }
    expect(crawls).toBe(2);
    // A run asked for by hand is a run too.
    await tw.scheduler.runNow("crawl");
    await tw.tick();
    expect(rounds(t0)).toEqual([0, HOUR, 2 * HOUR]);
    expect(pushes.filter((p) => p.at === t0 + 2 * HOUR)).toHaveLength(4);
  });

  it("a function chooses: every 15 minutes while the crawler is off, after each crawl while it is on", async () => {
    const engine = await engines.first();
    const { tw, clock } = engine;
    const { send, rounds } = recorder(engine);
    let crawlerEnabled = false;
    const seen: { fanout: string; now: number }[] = [];
    tw.task("crawl", { every: "1h", run: () => (crawlerEnabled ? "crawled" : "the crawler is off") });
    const symbols = tw.fanout<string[]>("symbols", {
      reconcile: (ctx) => {
        seen.push(ctx);
        return crawlerEnabled ? { after: "crawl" } : "15m";
      },
      groups: { alerts: { targets: ["alert-1", "alert-2"] } },
      send,
    });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 15 * MINUTE);
    expect(seen.at(-1)).toEqual({ fanout: "symbols", now: t0 });
    await clock.set(t0 + 15 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 30 * MINUTE);

    // The crawler is switched on; asking for a reconciliation makes the fan-out choose again at once.
    await clock.set(t0 + 20 * MINUTE);
    crawlerEnabled = true;
    await symbols.reconcileNow();
    expect((await tw.tick()).nextWakeAt).toBe(t0 + HOUR);
    await clock.set(t0 + 45 * MINUTE);
    expect((await tw.tick()).outbound.used).toBe(0);
    await clock.set(t0 + HOUR);
    expect((await tw.tick()).outbound.used).toBe(2);

    // Switched off without a word: the next crawl run lets the fan-out choose again, and it goes back to 15 minutes.
    crawlerEnabled = false;
    await clock.set(t0 + 2 * HOUR);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 2 * HOUR + 15 * MINUTE);
    await clock.set(t0 + 2 * HOUR + 15 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 2 * HOUR + 30 * MINUTE);
    expect(rounds(t0)).toEqual([0, 15 * MINUTE, 20 * MINUTE, HOUR, 2 * HOUR + 15 * MINUTE]);
  });

  it("falls back to 15 minutes, with an error event, when the function throws or answers something that is not a plan", async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const { send } = recorder(engine);
    tw.task("crawl", { every: "1h", run: () => {} });
    const answers: (() => unknown)[] = [
      () => {
        throw new Error("config unreadable");
      },
      () => "often",
      () => ({ after: "no-such-task" }),
      () => 1e300,
    ];
    let n = 0;
    const symbols = tw.fanout<string[]>("symbols", { reconcile: (() => answers[n]!()) as never, groups: { alerts: { targets: ["alert-1", "alert-2"] } }, send });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    for (n = 0; n < answers.length; n++) {
      const at = t0 + n * 15 * MINUTE;
      await clock.set(at);
      if (n > 0) await symbols.reconcileNow();
      expect((await tw.tick()).nextWakeAt, `answer ${n}`).toBe(at + 15 * MINUTE);
    }
    const failures = named("fanout.reconcile_plan_failed");
    expect(failures).toHaveLength(4);
    expect(String(failures[0]!.error)).toMatch(/config unreadable/);
    expect(String(failures[1]!.error)).toMatch(/"often"/);
    expect(String(failures[2]!.error)).toMatch(/no task named "no-such-task"/);
  });

  it("refuses a plan naming a task that is not defined when the engine ticks or starts, sending nothing, and bad plans at declaration", async () => {
    const engine = await engines.first();
    const { tw } = engine;
    const { send, pushes } = recorder(engine);
    const symbols = tw.fanout<string[]>("symbols", { reconcile: { after: "crawl" }, groups: { alerts: { targets: ["alert-1"] } }, send });
    await symbols.push(["BTC"]);
    await expect(tw.tick()).rejects.toThrow(/fanout "symbols": reconcile: \{ after: "crawl" \} names no task; define it with tw\.task\("crawl", \.\.\.\)/);
    await expect(tw.start()).rejects.toThrow(/names no task/);
    expect(pushes).toEqual([]);

    const declare = (reconcile: unknown) => () => tw.fanout("bad", { reconcile: reconcile as never, groups: { a: { targets: ["t"] } }, send });
    for (const bad of [{ after: "" }, { after: 7 }, { after: "crawl\u0000" }, { after: "crawl", every: "1h" }, { before: "crawl" }, "often", true]) {
      expect(declare(bad), JSON.stringify(bad)).toThrow(/fanout "bad": reconcile: /);
    }
    expect(tw.fanouts.has("bad")).toBe(false);
  });
});

describe.each(allStoreCases())("a fan-out following a task on a started engine ($name)", (storeCase) => {
  const engine = realEngines({ afterStop: () => storeCase.cleanup() });

  it("reconciles right after each of the task's runs, with the outbound poll an hour away", async () => {
    const { tw, named } = await engine({ store: storeCase.make(), pollInterval: "1h", rescueInterval: "1h" });
    const pushes: string[] = [];
    tw.task("beat", { every: "1s", run: () => {} });
    const symbols = tw.fanout<string[]>("symbols", { reconcile: { after: "beat" }, groups: { alerts: { targets: ["alert-1", "alert-2"] } }, send: async (t) => void pushes.push(t as string) });
    await tw.start();
    await symbols.push(["BTC"]);
    await eventually(() => named("fanout.reconciled").length >= 2, "two reconciliations after the task's runs", 30_000);
    // Each reconciliation went to both targets, and came after a run of the task.
    const events = named("task.succeeded").concat(named("fanout.reconciled")).sort((a, b) => a.time - b.time || (a.event === "task.succeeded" ? -1 : 1));
    expect(events.findIndex((e) => e.event === "task.succeeded")).toBeLessThan(events.findIndex((e) => e.event === "fanout.reconciled"));
    // (The push's own round may itself be the first reconciliation, if a run came before it.)
    expect(pushes.length).toBeGreaterThanOrEqual(2 * named("fanout.reconciled").length);
  }, 40_000);
});
