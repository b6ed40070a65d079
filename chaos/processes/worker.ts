/**
 * A worker process: runs the `chaos` queue (or the flows scenario's queues) on the scenario's database. Its handler
 * writes `start` to the ledger before anything else and `done` once its work is over, just before it
 * returns; the work ignores `ctx.signal`, as work that cannot be interrupted would, so a worker that
 * lost a job's lease still tries to complete it (and the fence must refuse it).
 *
 * In the pool scenario the worker's application shares one small pg pool with tickwork, and on the
 * controller's word (`{ hog: ms }`) takes every connection of it for that long, as an application
 * whose queries pile up would.
 */
import type pg from "pg";
import { createTickwork, type Job, type JobContext } from "../../src/index.js";
import { appPool, openStore, type Target } from "../target.js";
import { child, ledgerSink, type ChildBase } from "./child.js";
import { FLOW_QUEUES } from "./flow-queues.js";

export interface WorkerConfig extends ChildBase {
  target: Target;
  leaseMs: number;
  rescueMs: number;
  pollMs: number;
  concurrency: number;
  workMs: [number, number];
  poolMax: number;
  /** Share one pool of `poolMax` connections with the application (the pool scenario). */
  sharedPool: boolean;
  /** Run the flows scenario's queues (FLOW_QUEUES) instead of `chaos`. */
  flows?: boolean;
}

export const WORKER_EVENTS = ["job.lease_lost", "job.outcome_refused", "job.lease_expired", "job.failed", "store.error"] as const;

const { config, ledger, say } = child<WorkerConfig>("worker");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const pool: pg.Pool | undefined = config.sharedPool && config.target.kind === "postgres" ? appPool(config.target, "worker", config.poolMax) : undefined;
const tw = await createTickwork({
  store: openStore(config.target, "worker", { max: config.poolMax, ...(pool ? { pool } : {}) }),
  instanceId: `worker-${process.pid}`,
  logger: ledgerSink(ledger, WORKER_EVENTS),
  rescueInterval: config.rescueMs,
  pollInterval: config.pollMs,
  migrate: false,
  handleSignals: false,
});
const [low, high] = config.workMs;
const work = async (job: Job, ctx: JobContext) => {
  ledger.append("start", { job: job.id, attempt: ctx.attempt });
  await sleep(low + Math.random() * (high - low));
  ledger.append("done", { job: job.id, attempt: ctx.attempt });
};
const options = { concurrency: config.concurrency, lease: config.leaseMs, retry: { maxAttempts: 1_000 } };
if (!config.flows) tw.queue("chaos", { ...options, handler: work });
else {
  tw.queue(FLOW_QUEUES.child, { ...options, handler: work });
  tw.queue(FLOW_QUEUES.keyed, { ...options, handler: work });
  // A parent says what it found of its children when it started: each must have ended already.
  tw.queue(FLOW_QUEUES.parent, {
    ...options,
    handler: async (job, ctx) => {
      ledger.append("start", { job: job.id, attempt: ctx.attempt });
      const children = await ctx.childResults();
      ledger.append("parent.saw", { job: job.id, attempt: ctx.attempt, total: job.children?.total ?? null, ids: children.map((c) => c.id), statuses: children.map((c) => c.status) });
      await sleep(low + Math.random() * (high - low));
      ledger.append("done", { job: job.id, attempt: ctx.attempt });
    },
  });
}

/** Takes every connection of the shared pool for `ms`, then gives them back. */
async function hog(ms: number): Promise<void> {
  if (!pool) return;
  ledger.append("hog.asked", { ms });
  const clients = await Promise.all(Array.from({ length: config.poolMax }, () => pool.connect()));
  ledger.append("hog.holding", { ms, connections: clients.length });
  await sleep(ms);
  for (const c of clients) c.release();
  ledger.append("hog.released");
}

process.on("message", (message: { hog?: number }) => {
  if (typeof message.hog === "number") hog(message.hog).catch((error: unknown) => ledger.append("hog.failed", { error: String(error) }));
});

await tw.start();
say("ready");
