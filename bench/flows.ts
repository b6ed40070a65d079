/**
 * `npm run bench:flows`: a flow of CHILDREN children (`enqueueFlow`) on SQLite (a temp file) and
 * PostgreSQL (a fresh schema), one engine with `tw.start()` running them at concurrency 50: how long
 * the flow takes to write, to run, and how long after the last child ended the parent started (the
 * parent is made due in the transaction that records the last child; its queue's worker here is
 * woken at once). REPS runs per store, alternating; medians with min-max.
 *
 * Results go to the terminal and to bench/results/flows-latest.{json,md}. BENCH_QUICK=1 shrinks
 * every size (a smoke run of the harness, not a measurement).
 */
import { createTickwork } from "../src/index.js";
import { postgresBackend, sqliteBackend, type Backend } from "./fixtures.js";
import { deferred, fmt, loadLine, machineInfo, machineLine, markdownTable, quantile, textTable, watchLoad, within, writeResults } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OUT = `flows-${QUICK ? "quick" : "latest"}`;
const CHILDREN = QUICK ? 500 : 10_000;
const REPS = QUICK ? 1 : 3;

interface Run {
  writeMs: number;
  runMs: number;
  /** From the last child's finished_at to the parent's started_at (engine clock, ms). */
  parentLagMs: number;
}

async function once(backend: Backend): Promise<Run> {
  const fixture = await backend.fresh();
  const tw = await createTickwork({ store: fixture.open(), logger: () => {}, handleSignals: false });
  try {
    const ended = deferred<void>();
    tw.queue("leaf", { concurrency: 50, handler: () => ({ ok: true }) });
    const root = tw.queue("root", { handler: () => ended.resolve() });
    const t0 = performance.now();
    const flow = await root.enqueueFlow({ payload: {}, children: Array.from({ length: CHILDREN }, (_, n) => ({ queue: "leaf", payload: { n } })) });
    const writeMs = performance.now() - t0;
    const t1 = performance.now();
    await tw.start();
    await within(300_000, "the flow's parent to run", ended.promise);
    const runMs = performance.now() - t1;
    const parent = (await tw.jobs.get(flow.id))!;
    let lastChild = 0;
    for (let before: string | undefined; ; ) {
      const page = await tw.jobs.list({ queue: "leaf", status: "succeeded", before, limit: 500 });
      for (const job of page) lastChild = Math.max(lastChild, job.finishedAt ?? 0);
      if (page.length < 500) break;
      before = page.at(-1)!.id;
    }
    return { writeMs, runMs, parentLagMs: parent.startedAt! - lastChild };
  } finally {
    await tw.stop();
    await fixture.drop();
  }
}

const backends = [sqliteBackend, postgresBackend];
const machine = machineInfo();
const load = watchLoad();
const runs = new Map<string, Run[]>(backends.map((b) => [b.name, []]));
for (let rep = 0; rep < REPS; rep++) {
  for (const backend of backends) runs.get(backend.name)!.push(await once(backend));
}
const loadSeen = load.stop();

const stat = (values: number[]) => `${fmt(quantile(values, 0.5))} (${fmt(Math.min(...values))}-${fmt(Math.max(...values))})`;
const header = ["store", `write ${CHILDREN} children, ms`, "run them, ms", "children/s", "parent started after the last child, ms"];
const rows = backends.map((b) => {
  const r = runs.get(b.name)!;
  return [b.name, stat(r.map((x) => x.writeMs)), stat(r.map((x) => x.runMs)), stat(r.map((x) => (CHILDREN / x.runMs) * 1000)), stat(r.map((x) => x.parentLagMs))];
});
console.log(textTable(header, rows));
const notes = [machineLine(machine), loadLine(machine, loadSeen, "the run keeps about 1-2 cores busy", "write and run times")];
console.log(notes.join("\n"));
writeResults(OUT, { children: CHILDREN, reps: REPS, machine, load: loadSeen, runs: Object.fromEntries(runs) }, [`# Flows: one parent, ${CHILDREN} children`, "", markdownTable(header, rows, [1, 2, 3, 4]), "", ...notes, ""].join("\n"));
