/**
 * pg-boss (10.x) in the side-by-side benchmark: its own schema per measurement (created by
 * `start()`, dropped after `stop()`), one queue (`createQueue`, policy "standard").
 *
 * pg-boss 10 has no per-worker concurrency option (teamSize/teamConcurrency went in 10.0): each
 * `work()` call is one polling loop that fetches `batchSize` jobs, runs the handler on the batch,
 * completes the batch in one statement, then waits out the rest of `pollingIntervalSeconds`
 * (src/worker.js) whether or not it found jobs. Concurrency c is therefore c `work()` calls, each
 * running its batch one job at a time, so at most c jobs run at once, as in the other systems.
 * - defaults: `pollingIntervalSeconds` 2, `batchSize` 1: each loop runs at most one job per 2 s;
 * - tuned: `pollingIntervalSeconds: 0.5` (the minimum it accepts) and `batchSize: 1000`, the lever
 *   its docs give for throughput (a loop then runs up to 2,000 jobs/s).
 * Nothing notifies a pg-boss worker of a new job from another process, so single jobs wait for
 * the next poll; `notifyWorker(id)` exists for a producer in the same process, and is not used:
 * the benchmark's producer stands in for any process.
 * Bulk enqueue is `insert([...])`; single enqueues are `send()`.
 */
import PgBoss from "pg-boss";
import type { Payload, Setting, System } from "./adapter.js";
import { DATABASE_URL, dropSchema, packageVersion, uniqueName } from "./servers.js";
import { reportProblem } from "./workloads.js";

const QUEUE = "bench";
export const PGBOSS_TUNED = { pollingIntervalSeconds: 0.5, batchSize: 1000 };

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
    settings: (concurrency) => ({ "work() calls": concurrency, ...work }),

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
      const db = boss.getDb();
      const count = async (where: string) =>
        Number((await db.executeSql(`SELECT count(*) AS n FROM "${schema}".job WHERE name = $1 AND ${where}`, [QUEUE])).rows[0].n);

      return {
        async enqueueBatch(payloads) {
          await boss.insert(payloads.map((data) => ({ name: QUEUE, data })));
        },
        async enqueue(payload) {
          await boss.send(QUEUE, payload);
        },
        async startWorkers() {
          for (let i = 0; i < concurrency; i++) {
            await boss.work<Payload>(QUEUE, work, async (jobs) => {
              for (const job of jobs) onJob(job.data);
            });
          }
        },
        unfinished: () => count("state IN ('created', 'retry', 'active')"),
        completed: () => count("state = 'completed'"),
        failed: () => count("(state = 'failed' OR retry_count > 0)"),
        async stopWorkers() {
          await boss.offWork(QUEUE);
        },
        async dispose() {
          try {
            await boss.stop({ graceful: true, timeout: 5_000, wait: true, close: true });
          } finally {
            await dropSchema(schema);
          }
        },
      };
    },
  };
}
