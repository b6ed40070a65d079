/**
 * pg-boss (12.x) in the side-by-side benchmark: its own schema per measurement (created by
 * `start()`, dropped after `stop()`), one queue (`createQueue`, policy "standard").
 *
 * Concurrency c is one `work()` call with `localConcurrency: c`, which starts c independent polling
 * loops (src/manager.ts `work`). Each loop fetches `batchSize` jobs, runs the handler on the batch,
 * completes the batch in one statement, then waits out the rest of `pollingIntervalSeconds`
 * (src/worker.ts) whether or not it found jobs, unless a burst trigger (`burstWhenBatchFull`,
 * `burstWhenReadyExceeds`, both off by default) has it fetch again at once. The handler here runs
 * its batch one job at a time, so at most c jobs run at once, as in the other systems (with handlers
 * that wait, as in run.c50.5ms, the tuned batches of 1,000 then hold most jobs in a few loops).
 * - defaults: `pollingIntervalSeconds` 2, `batchSize` 1: each loop runs at most one job per 2 s;
 * - tuned: `pollingIntervalSeconds: 0.5` (the minimum it accepts) and `batchSize: 1000`, the lever
 *   its docs give for throughput (a loop then runs up to 2,000 jobs/s). The burst triggers are left
 *   off, so the tuned setting is the same as with pg-boss 10.
 * pg-boss 12 can wake workers by LISTEN/NOTIFY (`useListenNotify: true` on the instance and
 * `notify: true` on the queue), off by default and not enabled here: a single job from another
 * process waits for the next poll. `notifyWorker(id)` wakes a worker from its own process, and is
 * not used either: the benchmark's producer stands in for any process.
 * Bulk enqueue is `insert(name, [...])`; single enqueues are `send()`.
 */
import { PgBoss } from "pg-boss";
import type { Counts, Payload, Setting, System } from "./adapter.js";
import { DATABASE_URL, dropSchema, packageVersion, uniqueName } from "./servers.js";
import { reportProblem } from "./workloads.js";

const QUEUE = "bench";
export const PGBOSS_TUNED = { pollingIntervalSeconds: 0.5, batchSize: 1000 };

/** pg-boss's own records of `queue`'s jobs by state, on a started instance (here and in round-trip.ts). */
export function pgBossCounts(boss: PgBoss, schema: string, queue: string): Counts {
  const count = async (where: string) =>
    Number((await boss.getDb().executeSql(`SELECT count(*) AS n FROM "${schema}".job WHERE name = $1 AND ${where}`, [queue])).rows[0].n);
  return {
    unfinished: () => count("state IN ('created', 'retry', 'active')"),
    completed: () => count("state = 'completed'"),
    failed: () => count("(state = 'failed' OR retry_count > 0)"),
  };
}

export function pgBossSystem(setting: Setting): System {
  const id = `pg-boss.${setting}`;
  const work = setting === "tuned" ? PGBOSS_TUNED : {};
  return {
    id,
    name: "pg-boss",
    version: packageVersion("pg-boss"),
    backend: "PostgreSQL",
    setting,
    peer: true,
    // The worker process of the workloads across processes runs with the tuned settings
    // (round-trip-worker.ts): at its defaults it cannot keep up with the producer's rates.
    ...(setting === "tuned" ? { workerProcess: "pg-boss" as const } : {}),
    settings: (concurrency) => ({ localConcurrency: concurrency, ...work }),

    async open({ concurrency, onJob }) {
      const schema = uniqueName("pgboss_bench");
      const boss = new PgBoss({ connectionString: DATABASE_URL, schema });
      boss.on("error", (error: Error) => reportProblem(id, `error: ${error.message.slice(0, 80)}`));
      try {
        await boss.start();
        await boss.createQueue(QUEUE);
      } catch (error) {
        await boss.stop({ graceful: false }).catch(() => {});
        await dropSchema(schema);
        throw error;
      }
      return {
        async enqueueBatch(payloads) {
          await boss.insert(QUEUE, payloads.map((data) => ({ data })));
        },
        async enqueue(payload) {
          await boss.send(QUEUE, payload);
        },
        async startWorkers() {
          await boss.work<Payload>(QUEUE, { ...work, localConcurrency: concurrency }, async (jobs) => {
            for (const job of jobs) await onJob(job.data);
          });
        },
        ...pgBossCounts(boss, schema, QUEUE),
        async stopWorkers() {
          await boss.offWork(QUEUE);
        },
        async dispose() {
          try {
            await boss.stop({ graceful: true, timeout: 5_000, close: true });
          } finally {
            await dropSchema(schema);
          }
        },
      };
    },
  };
}
