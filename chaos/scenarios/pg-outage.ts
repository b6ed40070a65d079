/**
 * PostgreSQL restarted (`pg_ctl restart -m fast`: connections closed, a clean shutdown) or stopped
 * at once (`pg_ctl stop -m immediate`: every backend dies, no checkpoint, crash recovery at the next
 * start) under load, on the run's own cluster only. Each outage is a window in the ledger, from the
 * command to the server accepting connections again.
 */
import { pause } from "../wait.js";
import type { QueueFault } from "./queue-run.js";

export const pgRestart: QueueFault = {
  planned: { full: 4, quick: 2 },
  describe: () => "pg_ctl restart -m fast",
  async inject(ctl) {
    const start = Date.now();
    await ctl.env.server!.restartFast();
    ctl.record("fault.window", { what: "restart -m fast", start, end: Date.now() });
    return "restarts";
  },
};

export const pgStop: QueueFault = {
  planned: { full: 3, quick: 1 },
  describe: (env) => `pg_ctl stop -m immediate, down ${env.settings.quick ? "1-2" : "2-8"} s, then start`,
  async inject(ctl) {
    const { env } = ctl;
    const start = Date.now();
    await env.server!.stopImmediate();
    // How long the server stays down is the scenario's choice, not a wait for progress.
    await pause(env.settings.quick ? env.random.between(1_000, 2_000) : env.random.between(2_000, 8_000));
    await env.server!.start();
    ctl.record("fault.window", { what: "stop -m immediate", start, end: Date.now() });
    return "immediate stops";
  },
};
