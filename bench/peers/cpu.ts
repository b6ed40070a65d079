/**
 * CPU time spent by each side of a measurement, read from Linux's /proc: this process (the systems'
 * client side in the one-process workloads, the producer in the others), the worker processes the
 * harness started, the PostgreSQL server and Redis. Divided by the jobs of the measurement it gives
 * CPU per job on both sides of the wire, which says where a throughput gap comes from when two
 * systems share the same two cores.
 *
 * PostgreSQL's time is the postmaster's, its live children's (backends, WAL writer, checkpointer)
 * and that of the children it reaped since it started (cutime/cstime): a backend that ends mid-run
 * moves its time from the second term to the third, so the total only grows.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { REDIS_URL, withClient } from "./servers.js";

/** CPU per job, µs, of a measurement: this process, the worker processes, and the store's server (none for SQLite). */
export interface CpuPerJob {
  process: number;
  workers: number;
  server: number | null;
}

const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  } catch {
    return 10;
  }
})();

/** utime, stime, cutime, cstime (ms) and the parent pid of a process, or undefined once it is gone. */
function stat(pid: number): { own: number; reaped: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces), from the 3rd: state ppid ... utime(14) stime(15) cutime(16) cstime(17).
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const n = (i: number) => Number(f[i - 3]);
    return { own: (n(14) + n(15)) * TICK_MS, reaped: (n(16) + n(17)) * TICK_MS, ppid: n(4) };
  } catch {
    return undefined;
  }
}

function postgresMs(postmaster: number): number | null {
  const root = stat(postmaster);
  if (!root) return null;
  let total = root.own + root.reaped;
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    const s = stat(pid);
    if (s?.ppid === postmaster) total += s.own;
  }
  return total;
}

/** The pids of the local PostgreSQL's postmaster and of Redis, found once per run (null where not local). */
export interface ServerPids {
  postmaster: number | null;
  redis: number | null;
}

export async function serverPids(): Promise<ServerPids> {
  const postmaster = await withClient(async (client) => {
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    return stat(rows[0]!.pid)?.ppid ?? null;
  }).catch(() => null);
  const redis = await (async () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const info = await client.info("server");
      const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      return Number.isInteger(pid) && stat(pid) ? pid : null;
    } catch {
      return null;
    } finally {
      client.disconnect();
    }
  })();
  return { postmaster, redis };
}

/** CPU milliseconds so far of this process, of `workers` and of the server `backend` names (null: none, or not readable here). */
function read(pids: ServerPids, backend: string, workers: number[]): { process: number; workers: number; server: number | null } {
  const usage = process.cpuUsage();
  const server =
    backend === "PostgreSQL" ? (pids.postmaster === null ? null : postgresMs(pids.postmaster)) : backend === "Redis" && pids.redis !== null ? (stat(pids.redis)?.own ?? null) : null;
  return { process: (usage.user + usage.system) / 1000, workers: workers.reduce((sum, pid) => sum + (stat(pid)?.own ?? 0), 0), server };
}

let found: Promise<ServerPids> | undefined;

/**
 * Starts measuring a system's CPU now: the returned function reads every side again and answers CPU
 * per job (µs) for `jobs` jobs. `workers` are the pids of the measurement's worker processes; the
 * servers' pids are looked up at the first measurement of the run.
 */
export async function cpuMeter(backend: string, workers: number[] = []): Promise<(jobs: number) => CpuPerJob> {
  const pids = await (found ??= serverPids());
  const before = read(pids, backend, workers);
  return (jobs) => {
    const after = read(pids, backend, workers);
    const us = (ms: number) => (ms * 1000) / jobs;
    return {
      process: us(after.process - before.process),
      workers: us(after.workers - before.workers),
      server: before.server !== null && after.server !== null ? us(after.server - before.server) : null,
    };
  };
}
