/**
 * The producer process: enqueues `jobs` jobs at `rate` jobs/s in batches (`enqueueMany`), then, until
 * the controller says `stop`, keeps the pending backlog topped up to `keepBacklog`, so every fault of
 * the scenario lands on a queue with work waiting. A batch's job ids go to the ledger (`ack`) once
 * `enqueueMany` has returned them: those are the jobs tickwork acknowledged, each of which must run.
 * A failed call (the server restarting) is retried with the same keys, so a batch that was committed
 * but whose answer was lost comes back as duplicates instead of new jobs.
 */
import { createTickwork } from "../../src/index.js";
import { openStore, type Target } from "../target.js";
import { child, type ChildBase } from "./child.js";

export interface ProducerConfig extends ChildBase {
  target: Target;
  jobs: number;
  keepBacklog: number;
  rate: number;
}

const BATCH = 100;
const { config, ledger, say } = child<ProducerConfig>("producer");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const tw = await createTickwork({ store: openStore(config.target, "producer", { max: 2 }), logger: () => {}, migrate: false, handleSignals: false });
// The same retry budget as the workers declare: a job may take many kills before it succeeds, and
// which process's maxAttempts a job gets is not what this run is about.
const queue = tw.queue<{ n: number }>("chaos", { retry: { maxAttempts: 1_000 } });
let stopping = false;
let next = 0;
let acked = 0;
let failedCalls = 0;
process.on("message", (message: { stop?: boolean }) => {
  if (message.stop) stopping = true;
});

/** Enqueues jobs n..n+count-1, retrying the same batch until tickwork answers. */
async function enqueue(count: number): Promise<void> {
  const items = Array.from({ length: count }, (_, i) => ({ payload: { n: next + i }, key: `n-${next + i}` }));
  next += count;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      const jobs = await queue.enqueueMany(items);
      ledger.append("ack", { ids: jobs.map((j) => j.id), ns: jobs.map((j) => (j.payload as { n: number }).n), duplicates: jobs.filter((j) => j.duplicate).length });
      acked += jobs.length;
      return;
    } catch (error) {
      failedCalls++;
      ledger.append("enqueue.failed", { from: items[0]!.payload.n, count, error: String(error).slice(0, 300) });
      await sleep(delay);
    }
  }
}

async function pending(): Promise<number> {
  const [row] = await tw.jobs.counts("chaos");
  return row ? row.counts.pending : 0;
}

say("ready");
const started = Date.now();
while (next < config.jobs) {
  await enqueue(Math.min(BATCH, config.jobs - next));
  // Paced at `rate`: the batch that is due now goes; the producer never runs ahead of the clock.
  await sleep(started + (next / config.rate) * 1000 - Date.now());
}
say("initial.done", { acked });
while (!stopping) {
  let waiting: number;
  try {
    waiting = await pending();
  } catch {
    waiting = config.keepBacklog;
  }
  if (waiting < config.keepBacklog / 2) {
    for (let left = config.keepBacklog - waiting; left > 0 && !stopping; left -= BATCH) await enqueue(Math.min(BATCH, left));
  }
  await sleep(200);
}
say("done", { acked, failedCalls });
ledger.close();
await tw.stop();
process.exit(0);
