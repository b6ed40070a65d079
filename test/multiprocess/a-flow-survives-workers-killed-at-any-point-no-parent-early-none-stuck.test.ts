import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { FixtureProcess, spawnFixture } from "../crash/fixtures/child-process.js";
import { newTarget, openCrashDb, openStore, type Target } from "../crash/fixtures/target.js";
import type { FlowTreeWorkerConfig, RootRun } from "./fixtures/flow-tree-worker.js";

const WORKER = fileURLToPath(new URL("./fixtures/flow-tree-worker.ts", import.meta.url));
const CHILDREN = 300;

let teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  const steps = teardown.reverse();
  teardown = [];
  for (const step of steps) await step().catch(() => {});
});

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(["postgres", "sqlite"] as const)("a flow across processes whose workers are SIGKILLed (%s)", (kind: Target["kind"]) => {
  it(`a root of ${CHILDREN} children runs only after all of them succeeded, and is not left waiting`, async () => {
    const { target, cleanup } = newTarget(kind);
    teardown.push(cleanup);
    const dir = mkdtempSync(join(tmpdir(), "tickwork-flow-"));
    teardown.push(async () => rmSync(dir, { recursive: true, force: true }));
    const rootLedger = join(dir, "roots.jsonl");
    const tw = await createTickwork({ store: openStore(target), logger: () => {}, handleSignals: false });
    teardown.push(() => tw.stop());
    tw.queue("leaf", {});
    const root = tw.queue("root", {});
    const db = openCrashDb(target);
    teardown.push(() => db.close());

    let next = 0;
    const workers: FixtureProcess[] = [];
    const spawn = () => {
      const config: FlowTreeWorkerConfig = { target, instanceId: `tree-${process.pid}-${next++}`, rootLedger, ...(kind === "sqlite" ? { pollInterval: "50ms" } : {}) };
      const worker = new FixtureProcess(spawnFixture(WORKER, config), `flow worker ${config.instanceId}`, 30_000);
      teardown.push(() => worker.kill());
      workers.push(worker);
      return worker;
    };
    await Promise.all([spawn(), spawn(), spawn()].map((w) => w.ready));

    const flow = await root.enqueueFlow({ payload: {}, children: Array.from({ length: CHILDREN }, (_, n) => ({ queue: "leaf", payload: { n } })) });
    const childCount = async () => Number((await db.query<{ n: number | string }>(`SELECT count(*) AS n FROM tickwork_jobs WHERE parent_id = ? AND status = 'succeeded'`, [Number(flow.id)]))[0]!.n);

    // Kill a worker each time another slice of the children has succeeded, and start a new one.
    for (const share of [0.2, 0.45, 0.7]) {
      await until(async () => ((await childCount()) >= CHILDREN * share ? true : undefined), `${share * 100}% of the children`, 60_000);
      const victim = workers.find((w) => w.alive)!;
      await victim.kill();
      await spawn().ready;
    }

    const done = await until(async () => {
      const [row] = await db.query<{ status: string }>(`SELECT status FROM tickwork_jobs WHERE id = ?`, [Number(flow.id)]);
      return row?.status === "succeeded" ? row : undefined;
    }, "the root to succeed", 60_000);
    expect(done.status).toBe("succeeded");

    const [last] = await db.query<{ at: number | string }>(`SELECT max(finished_at) AS at FROM tickwork_jobs WHERE parent_id = ?`, [Number(flow.id)]);
    const runs = readFileSync(rootLedger, "utf8").trim().split("\n").map((line) => JSON.parse(line) as RootRun);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const run of runs) {
      // Every run of the root saw every child succeeded, and started after the last one ended.
      expect(run).toMatchObject({ job: flow.id, children: CHILDREN, succeeded: CHILDREN, sum: (CHILDREN * (CHILDREN - 1)) / 2 });
      expect(run.at).toBeGreaterThanOrEqual(Number(last!.at));
    }
    expect(await childCount()).toBe(CHILDREN);
    // Past every deadline above (three slices and the root at 60 s each, four spawns at 30 s each):
    // the test's own bound must not end it before its conditions have had their time on a loaded host.
  }, 4 * 60_000 + 4 * 30_000 + 30_000);
});
