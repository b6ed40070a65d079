/**
 * The command line of `npm run chaos` and the settings each mode runs with. Full mode uses the
 * engine's own defaults for the job lease and rescue interval (20 s, 5 s), so its recovery figures
 * are the ones a user with default settings gets; `--quick` shrinks every time and count so that CI
 * runs every scenario on both stores in a few minutes.
 */
import { parseArgs } from "node:util";

export const SCENARIOS = ["sigkill", "sigstop", "pg-restart", "pg-stop", "pg-terminate", "pool", "periodic", "idempotency", "flows"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
export type StoreKind = "postgres" | "sqlite";

export interface Settings {
  quick: boolean;
  scenarios: ScenarioName[];
  stores: StoreKind[];
  seed: number;
  /** Jobs the producer enqueues first (the backlog the faults start under). */
  jobs: number;
  /** While faults remain, the producer tops the pending backlog up to this. */
  keepBacklog: number;
  /** Producer pace, jobs per second. */
  rate: number;
  workers: number;
  concurrency: number;
  /** Each job's handler works a random time in this range (ms). */
  workMs: [number, number];
  leaseMs: number;
  rescueMs: number;
  /** SQLite has no notifications across processes: idle workers look this often. */
  sqlitePollMs: number;
  /** PostgreSQL pool size of each process (tickwork's `max`). */
  poolMax: number;
  /** Faults per scenario; undefined: the scenario's own default for the mode. */
  faults: number | undefined;
  /** Time between two faults, ms. */
  gapMs: [number, number];
  taskEveryMs: number;
  taskLeaseMs: number;
  runners: number;
  staleAfterMs: number;
  keys: number;
  racers: number;
  fsync: boolean;
  keep: boolean;
  json: string | undefined;
  /** A PostgreSQL server given by URL instead of a cluster of the run's own. */
  databaseUrl: string | undefined;
  port: number;
}

const USAGE = `usage: npm run chaos -- [options]
  --scenario <names>   comma-separated, or all (default): ${SCENARIOS.join(", ")}
  --store <kind>       pg | sqlite | all (default)
  --quick              short run for CI (small counts, short leases)
  --jobs <n>           initial backlog                         --faults <n>   faults per scenario
  --workers <n>        worker processes                        --concurrency <n>
  --lease <ms|Ns>      job lease                               --rescue-interval <ms|Ns>
  --rate <n>           producer jobs/s                         --keep-backlog <n>
  --task-lease <Ns>    periodic task lease                     --every <Ns>  task period
  --stale-after <Ns>   idempotency staleAfter                  --keys <n>    idempotency keys
  --seed <n>           replay a run's fault sequence           --no-fsync    ledger without fsync
  --keep               keep ledgers, SQLite files and schemas  --json <file> write the results as JSON
  --port <n>           first port tried for the run's own PostgreSQL cluster (default 54329)
PostgreSQL: the run's own cluster (initdb in a temporary directory), or CHAOS_DATABASE_URL
(a server given by URL: pg-restart and pg-stop need the own cluster and are skipped there).`;

export class UsageError extends Error {}

/** "2s" | "500ms" | "1500" -> ms. */
function ms(value: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag}: expected a duration such as 2s or 500ms, got ${JSON.stringify(value)}`);
  const n = Number(m[1]);
  return Math.round(m[2] === "s" ? n * 1000 : m[2] === "m" ? n * 60_000 : n);
}

function int(value: string, flag: string, min = 1): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag}: expected an integer >= ${min}, got ${JSON.stringify(value)}`);
  return n;
}

export function parseSettings(argv: string[], env: NodeJS.ProcessEnv): Settings | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        scenario: { type: "string", default: "all" },
        store: { type: "string", default: "all" },
        quick: { type: "boolean", default: false },
        jobs: { type: "string" },
        "keep-backlog": { type: "string" },
        rate: { type: "string" },
        workers: { type: "string" },
        concurrency: { type: "string" },
        lease: { type: "string" },
        "rescue-interval": { type: "string" },
        faults: { type: "string" },
        "task-lease": { type: "string" },
        every: { type: "string" },
        "stale-after": { type: "string" },
        keys: { type: "string" },
        seed: { type: "string" },
        "no-fsync": { type: "boolean", default: false },
        keep: { type: "boolean", default: false },
        json: { type: "string" },
        port: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const v = parsed.values;
  if (v.help) return "help";
  const quick = v.quick === true;

  const names = v.scenario === "all" ? [...SCENARIOS] : v.scenario!.split(",").map((s) => s.trim());
  for (const name of names) if (!(SCENARIOS as readonly string[]).includes(name)) throw new UsageError(`--scenario: unknown scenario ${JSON.stringify(name)} (known: ${SCENARIOS.join(", ")})`);
  const storeArg = v.store!;
  const stores: StoreKind[] =
    storeArg === "all" ? ["postgres", "sqlite"] : storeArg === "pg" || storeArg === "postgres" ? ["postgres"] : storeArg === "sqlite" ? ["sqlite"] : [];
  if (stores.length === 0) throw new UsageError(`--store: expected pg, sqlite or all, got ${JSON.stringify(storeArg)}`);

  const lease = v.lease ? ms(v.lease, "--lease") : quick ? 2_000 : 20_000;
  if (lease < 1_000) throw new UsageError("--lease: tickwork's lease is at least 1s");
  const taskLease = v["task-lease"] ? ms(v["task-lease"], "--task-lease") : quick ? 2_000 : 10_000;
  const staleAfter = v["stale-after"] ? ms(v["stale-after"], "--stale-after") : quick ? 2_000 : 10_000;
  if (taskLease < 1_000 || staleAfter < 1_000) throw new UsageError("--task-lease and --stale-after are at least 1s");
  return {
    quick,
    scenarios: names as ScenarioName[],
    stores,
    seed: v.seed ? int(v.seed, "--seed", 0) : Math.floor(Math.random() * 2 ** 31),
    jobs: v.jobs ? int(v.jobs, "--jobs") : quick ? 400 : 10_000,
    keepBacklog: v["keep-backlog"] ? int(v["keep-backlog"], "--keep-backlog", 0) : quick ? 200 : 2_000,
    rate: v.rate ? int(v.rate, "--rate") : quick ? 600 : 1_000,
    workers: v.workers ? int(v.workers, "--workers", 2) : 3,
    concurrency: v.concurrency ? int(v.concurrency, "--concurrency") : quick ? 4 : 8,
    workMs: quick ? [10, 60] : [10, 100],
    leaseMs: lease,
    rescueMs: v["rescue-interval"] ? ms(v["rescue-interval"], "--rescue-interval") : quick ? 500 : 5_000,
    sqlitePollMs: 250,
    poolMax: 4,
    faults: v.faults ? int(v.faults, "--faults") : undefined,
    gapMs: quick ? [1_000, 2_000] : [2_000, 5_000],
    taskEveryMs: v.every ? ms(v.every, "--every") : quick ? 1_000 : 2_000,
    taskLeaseMs: taskLease,
    runners: 3,
    staleAfterMs: staleAfter,
    keys: v.keys ? int(v.keys, "--keys") : quick ? 120 : 1_000,
    racers: quick ? 3 : 4,
    fsync: v["no-fsync"] !== true,
    keep: v.keep === true,
    json: v.json,
    databaseUrl: env.CHAOS_DATABASE_URL || undefined,
    port: v.port ? int(v.port, "--port", 1024) : 54329,
  };
}

export { USAGE };
