// How many no-op jobs one alarm tick of a Durable Object runs, and how long the tick takes, in workerd
// (miniflare) on this machine: `npx tsx test/cloudflare/measure-jobs-per-tick.ts`. A measurement,
// not a test: it asserts nothing and is not run by `npm test`.
import { cpus } from "node:os";
import { Miniflare } from "miniflare";
import type { LastTick } from "../../src/runtime/cloudflare/index.js";
import { COMPATIBILITY_DATE, bundleWorker, fixture } from "./support/workerd.js";

const script = await bundleWorker(fixture("bench-objects.ts"));
const mf = new Miniflare({
  modules: true,
  script,
  compatibilityDate: COMPATIBILITY_DATE,
  durableObjects: { DEFAULT_BUDGET: { className: "DefaultBudget", useSQLite: true }, UNBOUNDED: { className: "Unbounded", useSQLite: true } },
});
await mf.ready;

interface Drained {
  fill(count: number): Promise<void>;
  ticks(): Promise<LastTick[]>;
}

async function drain(binding: string, name: string, jobs: number): Promise<LastTick[]> {
  const ns = await mf.getDurableObjectNamespace(binding);
  const stub = ns.get(ns.idFromName(name)) as unknown as Drained;
  const started = performance.now();
  await stub.fill(jobs);
  const filled = performance.now() - started;
  for (;;) {
    const ticks = JSON.parse(JSON.stringify(await stub.ticks())) as LastTick[];
    if (ticks.reduce((sum, t) => sum + t.ran, 0) >= jobs) {
      const busy = ticks.filter((t) => t.ran > 0);
      const durations = busy.map((t) => t.durationMs).sort((a, b) => a - b);
      const perTick = busy.map((t) => t.ran);
      const first = busy[0]!;
      const last = busy.at(-1)!;
      const wall = last.at + last.durationMs - first.at;
      console.log(
        `${binding.padEnd(15)} ${String(jobs).padStart(6)} jobs: enqueue ${filled.toFixed(0)} ms; ${busy.length} ticks of ${Math.max(...perTick)} jobs at most; ` +
          `tick duration median ${durations[Math.floor(durations.length / 2)]} ms, max ${durations.at(-1)} ms; ` +
          `drained in ${wall} ms (${Math.round((jobs / wall) * 1000)} jobs/s, 100 ms between carried ticks included)`,
      );
      return ticks;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

console.log(`workerd ${COMPATIBILITY_DATE} via miniflare, ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}`);
for (let run = 1; run <= 3; run++) {
  await drain("DEFAULT_BUDGET", `default-${run}`, 9_000);
  await drain("UNBOUNDED", `unbounded-${run}`, 20_000);
}
await mf.dispose();
