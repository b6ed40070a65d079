/**
 * A scheduler process: runs the periodic task `chaos-tick` (`tw.start()`). Each run writes
 * `run.start` (its slot, `ctx.scheduledAt`, and the slots it collapsed, `ctx.missed`) to the ledger
 * before it works, and `run.done` after; the work ignores `ctx.signal`, as work that cannot be
 * interrupted would. The scheduler's slot events (skips, takeovers, lost leases) go to the ledger too.
 */
import { createTickwork } from "../../src/index.js";
import { openStore, type Target } from "../target.js";
import { child, ledgerSink, type ChildBase } from "./child.js";

export interface RunnerConfig extends ChildBase {
  target: Target;
  everyMs: number;
  leaseMs: number;
  /** Each run works a random time in this range (ms). */
  workMs: [number, number];
}

export const TASK = "chaos-tick";
export const RUNNER_EVENTS = ["task.overlap_skipped", "task.run_taken_over", "task.lease_lost", "task.outcome_refused", "task.missed", "task.failed", "store.error"] as const;

const { config, ledger, say } = child<RunnerConfig>("runner");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const tw = await createTickwork({
  store: openStore(config.target, "runner", { max: 3 }),
  instanceId: `runner-${process.pid}`,
  logger: ledgerSink(ledger, RUNNER_EVENTS),
  migrate: false,
  handleSignals: false,
});
const [low, high] = config.workMs;
tw.task(TASK, {
  every: config.everyMs,
  lease: config.leaseMs,
  run: async (ctx) => {
    ledger.append("run.start", { slot: ctx.scheduledAt, missed: ctx.missed, manual: ctx.manual });
    await sleep(low + Math.random() * (high - low));
    ledger.append("run.done", { slot: ctx.scheduledAt });
  },
});
await tw.start();
say("ready");
