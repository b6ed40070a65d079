/**
 * Where a SQLite job's time goes next to the single-row write limit (sqlite-limit.ts): user and
 * kernel CPU per transaction of the limit, and per job of tickwork's no-op runs at concurrency 10
 * and 50 (20,000 jobs enqueued first, timed from `tw.start()` to the last job settled), in one
 * process, alternating, 3 times. The limit's commits are mostly kernel time (each writes its WAL
 * frames), a tickwork job mostly SQLite's and the engine's user time: the ratio of the two moves
 * with how a host prices a system call against user-space work.
 *
 *   npx -y node@22.23.3 --import tsx bench/peers/sqlite-cpu-split.ts
 */
import { createTickwork } from "../../src/index.js";
import { sqliteBackend } from "../fixtures.js";
import { fmt, machineInfo, machineLine, watchLoad } from "../support.js";
import { sqliteWriteLimit } from "./sqlite-limit.js";

const JOBS = 20_000;
const TRANSACTIONS = 50_000;
/** sqliteWriteLimit's warm-up transactions, inside the CPU measured around it. */
const WARM_UP = 1_000;

const perUnit = (used: NodeJS.CpuUsage, units: number, wallMs: number) =>
  `user ${(used.user / units).toFixed(1)} µs, kernel ${(used.system / units).toFixed(1)} µs, wall ${((wallMs * 1000) / units).toFixed(1)} µs`;

console.log(machineLine(machineInfo()));
const load = watchLoad();
for (let rep = 1; rep <= 3; rep++) {
  let cpu = process.cpuUsage();
  let t0 = performance.now();
  const limit = sqliteWriteLimit(TRANSACTIONS);
  console.log(`rep ${rep} limit: ${fmt(limit)} tx/s; per transaction ${perUnit(process.cpuUsage(cpu), TRANSACTIONS + WARM_UP, performance.now() - t0)}`);
  for (const concurrency of [10, 50]) {
    const fx = await sqliteBackend.fresh();
    const tw = await createTickwork({ store: fx.open(), handleSignals: false, migrate: false, logger: () => {} });
    const queue = tw.queue<{ n: number }>("bench", { concurrency, handler: () => {} });
    for (let at = 0; at < JOBS; at += 1_000) await queue.enqueueMany(Array.from({ length: 1_000 }, (_, n) => ({ payload: { n: at + n } })));
    cpu = process.cpuUsage();
    t0 = performance.now();
    await tw.start();
    while ((await fx.live()) > 0) await new Promise((resolve) => setTimeout(resolve, 2));
    const wallMs = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    console.log(`rep ${rep} c${concurrency}: ${fmt(JOBS / (wallMs / 1000))} jobs/s (${(JOBS / (wallMs / 1000) / limit).toFixed(2)}x the limit); per job ${perUnit(used, JOBS, wallMs)}`);
    await tw.stop();
    await fx.drop();
  }
}
const l = load.stop();
console.log(`load average (1 min) during the run: mean ${l.mean.toFixed(2)}, max ${l.max.toFixed(2)}`);
