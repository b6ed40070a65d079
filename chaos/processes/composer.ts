/**
 * A composer process of the flows scenario: until the controller says `stop`, it writes, at random,
 * flows (a root with three children, one of which has two of its own), batches (4-8 items and a
 * completion job) and keyed enqueues in each dedupe mode (skip, replace, debounce, throttle) on a few
 * keys that every composer uses at once, so that they race. Whatever tickwork answers goes to the
 * ledger before the process goes on: `ack` with every job id it returned (a flow's whole tree, a
 * batch's items and completion, a keyed enqueue's job, new or not), or `call.error` with the error's
 * class and whether it is a TickworkError. A call that failed is not retried: a flow or batch is
 * written whole or not at all, and the verdict checks every job in the tables, acknowledged or not.
 */
import { createTickwork, TickworkError, type EnqueueOptions } from "../../src/index.js";
import { openStore, type Target } from "../target.js";
import { FLOW_QUEUES } from "./flow-queues.js";
import { child, type ChildBase } from "./child.js";

export interface ComposerConfig extends ChildBase {
  target: Target;
  /** Keys per dedupe mode; every composer uses the same ones. */
  keysPerMode: number;
  /** The debounce and throttle windows (ms). */
  debounceMs: number;
  throttleMs: number;
}

export type DedupeMode = "skip" | "replace" | "debounce" | "throttle";
export const DEDUPE_MODES: readonly DedupeMode[] = ["skip", "replace", "debounce", "throttle"];

const { config, ledger, say } = child<ComposerConfig>("composer");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

const tw = await createTickwork({ store: openStore(config.target, "composer", { max: 3 }), logger: () => {}, migrate: false, handleSignals: false });
// The workers' retry budget: a job may take many kills before it succeeds.
const retry = { maxAttempts: 1_000 };
const parents = tw.queue(FLOW_QUEUES.parent, { retry });
tw.queue(FLOW_QUEUES.child, { retry });
const keyed = tw.queue(FLOW_QUEUES.keyed, { retry });

let stopping = false;
process.on("message", (message: { stop?: boolean }) => {
  if (message.stop) stopping = true;
});
let n = 0;
const counts = { flows: 0, batches: 0, keyed: 0, errors: 0 };

async function flow(): Promise<string[]> {
  const leaf = () => ({ queue: FLOW_QUEUES.child, payload: { n: n++ } });
  const tree = await parents.enqueueFlow({
    payload: { n: n++ },
    children: [leaf(), leaf(), { queue: FLOW_QUEUES.parent, payload: { n: n++ }, children: [leaf(), leaf()] }],
  });
  const ids: string[] = [];
  const walk = (node: { id: string; children?: readonly { id: string; children?: unknown }[] }) => {
    ids.push(node.id);
    for (const c of node.children ?? []) walk(c as typeof node);
  };
  walk(tree);
  counts.flows++;
  return ids;
}

async function batch(): Promise<string[]> {
  const items = Array.from({ length: 4 + Math.floor(Math.random() * 5) }, () => ({ n: n++ }));
  const written = await tw.batch(items, { queue: FLOW_QUEUES.child, onComplete: { queue: FLOW_QUEUES.parent, payload: { n: n++ } } });
  counts.batches++;
  return [written.id, ...written.jobs];
}

async function keyedEnqueue(): Promise<{ ids: string[]; key: string; mode: DedupeMode; duplicate: boolean }> {
  const mode = pick(DEDUPE_MODES);
  const key = `${mode}-${Math.floor(Math.random() * config.keysPerMode)}`;
  const options: EnqueueOptions = { key };
  if (mode === "replace") options.dedupe = "replace";
  if (mode === "debounce") options.debounce = config.debounceMs;
  if (mode === "throttle") options.throttle = config.throttleMs;
  const job = await keyed.enqueue({ n: n++ }, options);
  counts.keyed++;
  return { ids: [job.id], key, mode, duplicate: job.duplicate === true };
}

say("ready");
while (!stopping) {
  const kind = pick(["flow", "flow", "batch", "keyed", "keyed", "keyed"] as const);
  const at = Date.now();
  try {
    if (kind === "flow") ledger.append("ack", { kind, ids: await flow() });
    else if (kind === "batch") ledger.append("ack", { kind, ids: await batch() });
    else ledger.append("ack", { kind, ...(await keyedEnqueue()), at });
  } catch (error) {
    counts.errors++;
    const name = error instanceof Error ? error.constructor.name : typeof error;
    ledger.append("call.error", { kind, typed: error instanceof TickworkError, name, error: String(error).slice(0, 300) });
    await sleep(100);
  }
  await sleep(5 + Math.random() * 20);
}
ledger.append("composer.done", counts);
say("done", counts);
ledger.close();
await tw.stop();
process.exit(0);
