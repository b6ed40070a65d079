/**
 * Backend connections killed with `pg_terminate_backend`: in turn every connection of the scenario's
 * processes (workers, producer, their LISTEN connections), or every connection of one worker. The
 * controller finds them by application_name, so on a shared server nothing else is touched.
 */
import pg from "pg";
import type { QueueFault } from "./queue-run.js";

export const pgTerminate: QueueFault = {
  planned: { full: 10, quick: 3 },
  describe: () => "pg_terminate_backend of every backend of the scenario, or of one worker",
  async inject(ctl, i) {
    const { env } = ctl;
    if (env.target.kind !== "postgres") throw new Error("pg-terminate runs on PostgreSQL only");
    const one = i % 2 === 1 ? env.random.pick(ctl.workers()) : undefined;
    const pattern = one ? `${env.target.appPrefix}-worker-${one.pid}` : `${env.target.appPrefix}-%`;
    const client = new pg.Client({ connectionString: env.server!.adminUrl(`tw-chaos-controller`) });
    await client.connect();
    try {
      const start = Date.now();
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1 AND pid <> pg_backend_pid()) AS t`,
        [pattern],
      );
      ctl.record("fault.window", { what: one ? `terminate worker ${one.pid}` : "terminate all", start, end: Date.now(), backends: Number(rows[0]?.n ?? 0) });
    } finally {
      await client.end();
    }
    return "terminations";
  },
};
