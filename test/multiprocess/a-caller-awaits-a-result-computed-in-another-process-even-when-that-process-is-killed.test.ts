import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { JobFailedError } from "../../src/queue/errors.js";
import type { Queue } from "../../src/queue/queue.js";
import type { QueueStore } from "../../src/queue/store/store.js";
import { FixtureProcess, spawnFixture } from "../crash/fixtures/child-process.js";
import { newTarget, openStore, type Target } from "../crash/fixtures/target.js";
import { wrapQueueOperation } from "../support/stores.js";
import type { ResultWorkerConfig } from "./fixtures/result-worker.js";

const WORKER = fileURLToPath(new URL("./fixtures/result-worker.ts", import.meta.url));

interface Setup {
  tw: Tickwork;
  /** `quotes` as this process declares it: no handler, so its jobs run only in the workers. */
  quotes: Queue<{ n: number; fail?: boolean }>;
  /** Store reads of a job made by this process's waits. */
  gets: () => number;
  spawn(options: { workMs: number; holdFirst?: boolean }): FixtureProcess;
}

let teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  const steps = teardown.reverse();
  teardown = [];
  for (const step of steps) await step().catch(() => {});
});

/** This process enqueues and waits (no handler); workers in other processes run `quotes`. */
async function setup(kind: Target["kind"]): Promise<Setup> {
  const { target, cleanup } = newTarget(kind);
  teardown.push(cleanup);
  let gets = 0;
  const store = wrapQueueOperation(openStore(target), "get", (real): QueueStore["get"] => (params) => ((gets += 1), real(params)));
  const tw = await createTickwork({ store, logger: () => {}, handleSignals: false });
  teardown.push(() => tw.stop());
  const quotes = tw.queue<{ n: number; fail?: boolean }>("quotes", {});
  let next = 0;
  return {
    tw,
    quotes,
    gets: () => gets,
    spawn({ workMs, holdFirst = false }) {
      const config: ResultWorkerConfig = {
        target, instanceId: `quotes-${process.pid}-${next++}`, workMs, holdFirst, lease: "2s", rescueInterval: "250ms",
        ...(kind === "sqlite" ? { pollInterval: "50ms" } : {}),
      };
      const worker = new FixtureProcess(spawnFixture(WORKER, config), `result worker ${config.instanceId}`, 30_000);
      teardown.push(() => worker.kill());
      return worker;
    },
  };
}

describe.each(["postgres", "sqlite"] as const)("a caller awaits a result computed in another process (%s)", (kind) => {
  it("enqueueAndWait resolves with the other process's result and hears its progress; a job failing there rejects here", async () => {
    const { tw, quotes, spawn } = await setup(kind);
    const worker = spawn({ workMs: 300 });
    await worker.ready;

    const heard: { step: number }[] = [];
    const result = await quotes.enqueueAndWait<{ quote: number; pid: number }>({ n: 21 }, { timeout: "20s", onProgress: (p) => heard.push(p as { step: number }) });
    expect(result).toEqual({ quote: 42, pid: worker.pid });
    // What was heard came in order, from what the worker wrote (1 at once; the rest at most once a second).
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.map((p) => p.step)).toEqual([...heard.map((p) => p.step)].sort());

    const failing = await tw.enqueue("quotes", { n: 1, fail: true });
    const error = await tw.jobs.wait(failing.id, { timeout: "20s" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as JobFailedError).message).toContain("quote 1 refused");
    // The two waits' 20 s each and a spawn's 30 s: the test's bound must not cut them short.
  }, 2 * 20_000 + 30_000 + 30_000);

  it("a wait outlives a worker SIGKILLed mid-job: another worker takes the job over and the caller gets its result", async () => {
    const { tw, spawn } = await setup(kind);
    const doomed = spawn({ workMs: 30, holdFirst: true });
    await doomed.ready;

    const job = await tw.enqueue("quotes", { n: 50 });
    const waited = tw.jobs.wait<{ quote: number; pid: number }>(job.id, { timeout: "30s" });
    await doomed.waitFor((l) => l.event === "job.started_here" && l.id === job.id, "the doomed worker starts the job");
    await doomed.kill();
    const heir = spawn({ workMs: 30 });
    await heir.ready;

    await expect(waited).resolves.toEqual({ quote: 100, pid: heir.pid });
    // The wait's 30 s and two spawns: the test's bound must not cut the wait short.
  }, 30_000 + 2 * 30_000 + 30_000);
});

describe("on PostgreSQL, a wait is told by LISTEN/NOTIFY and does not poll", () => {
  it("a 2 s job in another process is read a handful of times, not every 100 ms", async () => {
    const { tw, spawn, gets } = await setup("postgres");
    const worker = spawn({ workMs: 2_000 });
    await worker.ready;
    const job = await tw.enqueue("quotes", { n: 5 });
    const before = gets();
    await expect(tw.jobs.wait(job.id, { timeout: "20s" })).resolves.toEqual({ quote: 10, pid: worker.pid });
    // One read when the wait starts is watch(); then one per notification: the first progress write,
    // maybe a throttled one, the last one, the end. A 100 ms poll would have read about 20 times.
    expect(gets() - before).toBeLessThanOrEqual(5);
  }, 20_000 + 30_000 + 30_000);
});
