/**
 * `npm run bench:smoke`: every benchmark of this folder at its smallest size (BENCH_QUICK), one after
 * another in this one process, so that none of them can rot unnoticed. Nothing is measured: a
 * benchmark that throws, or records an error in a scenario (process.exitCode = 1), fails the run.
 * bench:peers has its own smoke run (`npm run bench:peers -- --quick`).
 *
 * Run with `node --expose-gc --import tsx` (the script does): the memory benchmark reads the heap
 * after a forced collection. It runs first, before the others have grown the heap of this process.
 */
const BENCHMARKS = ["memory", "queue", "schedule", "idempotency", "flat", "delivery", "fanout", "flow", "flows", "admin"] as const;

process.env.BENCH_QUICK = "1";
const times: string[] = [];
for (const name of BENCHMARKS) {
  const started = performance.now();
  process.stdout.write(`\nbench:smoke: ${name}\n`);
  // Each benchmark is a script whose top level runs it to its end (top-level await).
  await import(new URL(`./${name}.ts`, import.meta.url).href);
  const seconds = (performance.now() - started) / 1000;
  times.push(`${name} ${seconds.toFixed(1)} s${process.exitCode ? " (errors so far)" : ""}`);
}
process.stdout.write(`\nbench:smoke: ${times.join(", ")}\n`);
// A benchmark's pools and servers are closed by the benchmark; a handle some library keeps open must
// not keep CI waiting.
process.exit(process.exitCode ?? 0);
