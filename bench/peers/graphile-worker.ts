/**
 * graphile-worker in the side-by-side benchmark: its own schema per measurement (migrated by
 * `WorkerUtils.migrate()`, dropped after), one pg pool shared by the utils (enqueue) and the runner.
 *
 * - defaults: `run({ concurrency, taskList })` with graphile-worker's defaults (pool of 10,
 *   prepared statements, one job fetched and completed per round trip, PostgreSQL time);
 * - tuned: the settings of its performance page (worker.graphile.org/docs/performance), which
 *   reached its published figures: `localQueue: { size: 500 }` (jobs fetched and locked in batches),
 *   `completeJobBatchDelay: 0` and `failJobBatchDelay: 0` (completions batched), a pool of
 *   max(10, concurrency + 2) as its option docs advise, and `useNodeTime: true`.
 *   `pollInterval` is left at 2 s: it only paces jobs scheduled for later (new jobs arrive by
 *   LISTEN/NOTIFY), and none are here. Prepared statements are on in both (the default).
 * Bulk enqueue is `addJobs` (one `add_jobs` call per batch); single enqueues are `addJob`.
 * Completed jobs are deleted, so "completed" is enqueued minus the rows left.
 */
import { Logger, makeWorkerUtils, run, type Runner, type TaskList, type WorkerUtils } from "graphile-worker";
import pg from "pg";
import type { Counts, Payload, Setting, System } from "./adapter.js";
import { DATABASE_URL, dropSchema, packageVersion, uniqueName } from "./servers.js";
import { reportProblem } from "./workloads.js";

const TASK = "noop";

/**
 * graphile-worker's own records on `schema` (here and in round-trip.ts): it deletes a job once it
 * completes, so the rows left are the unfinished jobs and completed is what was enqueued minus them.
 */
export function graphileCounts(utils: WorkerUtils, schema: string, enqueued: () => number): Counts {
  const rows = (where = "") =>
    utils.withPgClient(async (client) => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"._private_jobs ${where}`)).rows[0]!.n));
  return {
    unfinished: () => rows(),
    completed: async () => enqueued() - (await rows()),
    failed: () => rows("WHERE last_error IS NOT NULL"),
  };
}

export function graphileWorkerSystem(setting: Setting): System {
  const id = `graphile-worker.${setting}`;
  const tuned = setting === "tuned";
  const poolSize = (concurrency: number) => (tuned ? Math.max(10, concurrency + 2) : 10);
  const workerPreset = { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 };
  // Warnings and errors are counted; graphile-worker's info lines (worker started...) are dropped.
  const logger = new Logger(() => (level, message) => {
    const l = level as string;
    if (l === "error" || l === "warning") reportProblem(id, `${l}: ${message.slice(0, 80)}`);
  });

  return {
    id,
    name: "graphile-worker",
    version: packageVersion("graphile-worker"),
    backend: "PostgreSQL",
    setting,
    peer: true,
    // The worker process of the workloads across processes runs with defaults (round-trip-worker.ts).
    ...(tuned ? {} : { workerProcess: "graphile-worker" as const }),
    settings: (concurrency) =>
      tuned ? { concurrency, maxPoolSize: poolSize(concurrency), useNodeTime: true, ...workerPreset } : { concurrency },

    async open({ concurrency, onJob }) {
      const schema = uniqueName("gw_bench");
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize(concurrency) });
      // Both handlers, as graphile-worker checks for them: a dropped idle client must not crash the run.
      pool.on("error", () => reportProblem(id, "idle pool client error"));
      pool.on("connect", (client) => client.on("error", () => reportProblem(id, "pool client error")));
      const utils = await makeWorkerUtils({ pgPool: pool, schema, logger });
      await utils.migrate();
      const taskList: TaskList = {
        [TASK]: async (payload) => {
          await onJob(payload as Payload);
        },
      };
      let enqueued = 0;
      let runner: Runner | undefined;

      return {
        async enqueueBatch(payloads) {
          await utils.addJobs(payloads.map((payload) => ({ identifier: TASK, payload })));
          enqueued += payloads.length;
        },
        async enqueue(payload) {
          await utils.addJob(TASK, payload);
          enqueued++;
        },
        async startWorkers() {
          runner = await run({
            pgPool: pool,
            schema,
            concurrency,
            taskList,
            parsedCronItems: [],
            noHandleSignals: true,
            logger,
            ...(tuned ? { useNodeTime: true, preset: { worker: workerPreset } } : {}),
          });
        },
        ...graphileCounts(utils, schema, () => enqueued),
        async stopWorkers() {
          const r = runner;
          runner = undefined;
          if (r) await r.stop();
        },
        async dispose() {
          try {
            await utils.release();
            await pool.end();
          } finally {
            await dropSchema(schema);
          }
        },
      };
    },
  };
}
