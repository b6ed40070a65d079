/**
 * Part 3 of the flow-control benchmark (`flow.ts`): what one claim costs, in this process, through
 * `store.queue.claim` exactly as a worker calls it, on a store whose statements are counted.
 *
 * - PostgreSQL: the store runs on a pool whose clients count every `query` they send: each is one
 *   round trip (pg sends parse, bind, execute and sync together), BEGIN and COMMIT included; the
 *   statements are those other than BEGIN, COMMIT and ROLLBACK.
 * - SQLite: the store runs on a better-sqlite3 executor that counts each statement it runs. There is
 *   no round trip in process; the transaction's BEGIN and COMMIT are better-sqlite3's own.
 * Only the claim is counted and timed; the settles between claims, which keep the groups' running
 * counts where the scenario wants them, are not.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Job } from "../src/index.js";
import { parseQueueOptions } from "../src/queue/options.js";
import type { ClaimLimits } from "../src/queue/store/store.js";
import { BETTER_SQLITE_MAX_PARAMS, betterSqliteExecutor } from "../src/store/better-sqlite3.js";
import { postgres } from "../src/store/postgres.js";
import { sqlite } from "../src/store/sqlite.js";
import { sqliteStore } from "../src/store/sqlite-store.js";
import type { Store } from "../src/store/store.js";
import type { SqliteExecutor } from "../src/db/sqlite-executor.js";
import type { Tickwork } from "../src/tickwork.js";
import { DATABASE_URL, migratedPostgresSchema } from "./fixtures.js";
import { flowQueueOptions, type FlowLimits, type FlowPayload } from "./flow-shared.js";
import { quantile } from "./support.js";

export type StoreKind = "postgres" | "sqlite";

/** One kind of claim: a plain queue, a global limit, or a grouped queue with this many groups holding jobs. */
export interface ClaimPoint {
  id: string;
  label: string;
  limits: FlowLimits;
  /** Groups holding pending jobs (grouped points only). */
  groups?: number;
  /**
   * Jobs of one group each claim may take (`serialDepth`, groupConcurrency 1 on PostgreSQL), as a
   * worker of jobs faster than a round trip asks: the claim asks for this many times the limit.
   */
  depth?: number;
}

export interface ClaimSettings {
  /** Measured claims per point and round. */
  claims: number;
  /** Claims before the measured ones (statement preparation, caches). */
  warmup: number;
  /** Jobs each claim asks for: a worker under shared limits asks for its free slots. */
  limit: number;
  /** Jobs kept running (in other groups) before each claim, as other workers' would be. */
  running: number;
}

/** Per claim: wall ms, statements, round trips (PostgreSQL only), jobs started. */
export interface ClaimSample {
  ms: number;
  statements: number;
  roundTrips: number | null;
  jobs: number;
}

export interface ClaimRound {
  /** Jobs enqueued before the round, spread evenly over the point's groups. */
  jobs: number;
  /** Jobs kept running before each claim. */
  kept: number;
  samples: ClaimSample[];
}

const QUEUE = "flow-claims";

interface Counter {
  on: boolean;
  statements: number;
  roundTrips: number;
}

/** A fresh database with a store whose statements are counted, and a plain store for the producer. */
interface CountedDb {
  store: Store;
  counter: Counter;
  /** Opens another store on the same database, uncounted (for enqueueing through an engine). */
  open(): Store;
  drop(): Promise<void>;
}

const TX_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK)\b/i;

async function countedPostgres(): Promise<CountedDb> {
  const { schema, side } = await migratedPostgresSchema("tw_flow_claims");
  const counter: Counter = { on: false, statements: 0, roundTrips: 0 };
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, options: `-c search_path="${schema}"` });
  pool.on("error", () => {});
  // Each client of the pool, as it connects, counts what it sends; pool.query goes through a client too.
  pool.on("connect", (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (counter.on) {
        counter.roundTrips++;
        const first = args[0];
        const text = typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "");
        if (!TX_CONTROL.test(text)) counter.statements++;
      }
      return send(...args);
    };
  });
  return {
    store: postgres({ pool }),
    counter,
    open: () => postgres({ url: DATABASE_URL, schema }),
    async drop() {
      await pool.end();
      try {
        await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await side.end();
      }
    },
  };
}

async function countedSqlite(): Promise<CountedDb> {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-flow-claims-"));
  const path = join(dir, "bench.db");
  const setup = sqlite(path);
  await setup.migrate();
  await setup.close();
  const counter: Counter = { on: false, statements: 0, roundTrips: 0 };
  // The pragmas `sqlite(path)` sets, on a connection whose executor counts the statements it runs.
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  const inner = betterSqliteExecutor(db);
  const tick = () => void (counter.on && counter.statements++);
  const counted: SqliteExecutor = {
    all: (sql, params) => (tick(), inner.all(sql, params)),
    run: (sql, params) => (tick(), inner.run(sql, params)),
    exec: (sql) => inner.exec(sql),
    transaction: (fn) => inner.transaction(fn),
  };
  return {
    store: sqliteStore(counted, { name: `sqlite(${path}, counted)`, maxParams: BETTER_SQLITE_MAX_PARAMS, close: () => db.close() }),
    counter,
    open: () => sqlite(path),
    async drop() {
      if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One round of one point on a fresh database: enqueue, then `warmup + claims` claims, each after
 * settling the oldest running jobs down to the point's kept count. A grouped point keeps at most
 * `groups - limit` running (one group keeps none: with groupConcurrency 1, a job left running would
 * hold its only group and every claim would find nothing).
 */
export async function claimRound(kind: StoreKind, point: ClaimPoint, s: ClaimSettings, engine: (store: Store) => Promise<Tickwork>): Promise<ClaimRound> {
  const db = kind === "postgres" ? await countedPostgres() : await countedSqlite();
  try {
    const groups = point.groups ?? 1;
    const depth = point.depth ?? 1;
    const limit = s.limit * depth;
    const kept = point.groups !== undefined ? Math.min(s.running, Math.max(0, groups - s.limit)) : s.running;
    // Enough that no group runs dry: claims take the groups round-robin, so they drain evenly; and at
    // least `depth` per group, so a claim finds them all.
    const jobs = Math.ceil(Math.max(Math.max(2, depth) * groups, (s.warmup + s.claims) * limit + kept + groups) / groups) * groups;
    const producer = await engine(db.open());
    try {
      const queue = producer.queue<FlowPayload>(QUEUE, flowQueueOptions(s.limit, point.limits));
      for (let i = 0; i < jobs; i += 1_000) {
        await queue.enqueueMany(Array.from({ length: Math.min(1_000, jobs - i) }, (_, k) => ({ payload: { n: i + k, g: (i + k) % groups } })));
      }
    } finally {
      await producer.stop();
    }

    // The limits a worker of this declaration passes to every claim: all but globalConcurrency, which
    // the worker holds as slots. A worker asks for slots when it has none, at most every 50 ms when it
    // holds fewer than it could fill, and renews them every quarter lease: at most once per claim,
    // which is what the global point counts (the ask, then the claim), an upper bound.
    const declared = parseQueueOptions(QUEUE, flowQueueOptions(s.limit, point.limits)).limits;
    const { globalConcurrency: cap, ...rest } = declared ?? { buckets: [], grouped: false };
    const limits: ClaimLimits | undefined = rest.grouped || rest.buckets.length > 0 ? rest : undefined;
    const { store, counter } = db;
    const running: Job[] = [];
    const samples: ClaimSample[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < s.warmup + s.claims; i++) {
      if (running.length > kept) {
        const done = running.splice(0, running.length - kept);
        await store.queue.settleMany({ workerId: "bench/flow-claims", outcomes: done.map((job) => ({ kind: "succeeded", id: job.id, attempt: job.attempts })), now: Date.now() });
      }
      const now = Date.now();
      counter.statements = 0;
      counter.roundTrips = 0;
      counter.on = true;
      const t0 = performance.now();
      if (cap !== undefined) await store.queue.holdSlots({ queue: QUEUE, workerId: "bench/flow-claims", want: s.limit, cap, now, until: now + 60_000 });
      const result = await store.queue.claim({
        queue: QUEUE, limit, now, leaseUntil: now + 60_000, workerId: "bench/flow-claims", limits, after: cursor, ...(depth > 1 ? { serialDepth: depth } : {}),
      });
      const ms = performance.now() - t0;
      counter.on = false;
      cursor = result.cursor;
      running.push(...result.jobs);
      if (result.jobs.length === 0) throw new Error(`${point.label}: claim ${i + 1} started nothing (held by ${result.held ?? "nothing"}); the scenario ran out of due jobs`);
      if (i >= s.warmup) samples.push({ ms, statements: counter.statements, roundTrips: kind === "postgres" ? counter.roundTrips : null, jobs: result.jobs.length });
    }
    return { jobs, kept, samples };
  } finally {
    await db.store.close();
    await db.drop();
  }
}

/** What the report shows of a point's rounds. */
export interface ClaimFigures {
  /** Median ms per claim of each round. */
  msMedians: number[];
  /** p95 ms per claim over every measured claim. */
  msP95: number;
  statements: { mean: number; min: number; max: number };
  roundTrips: { mean: number; min: number; max: number } | null;
  jobsPerClaim: number;
}

export function claimFigures(rounds: ClaimRound[]): ClaimFigures {
  const all = rounds.flatMap((r) => r.samples);
  const stats = (values: number[]) => ({ mean: values.reduce((a, b) => a + b, 0) / values.length, min: Math.min(...values), max: Math.max(...values) });
  const trips = all.map((s) => s.roundTrips).filter((n): n is number => n !== null);
  return {
    msMedians: rounds.map((r) => quantile(r.samples.map((s) => s.ms), 0.5)),
    msP95: quantile(all.map((s) => s.ms), 0.95),
    statements: stats(all.map((s) => s.statements)),
    roundTrips: trips.length ? stats(trips) : null,
    jobsPerClaim: all.reduce((n, s) => n + s.jobs, 0) / all.length,
  };
}
