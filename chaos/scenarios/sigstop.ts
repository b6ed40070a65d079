/**
 * SIGSTOP of a busy worker past its lease, then SIGCONT: while it is frozen its jobs are rescued and
 * run elsewhere; once thawed, its handlers finish and their completions must be refused.
 *
 * On SQLite a process frozen inside a write transaction holds the file's write lock for as long as it
 * is frozen, and every other process waits for it: such a freeze is undone at once and tried again
 * (and counted), since it tests SQLite's locking rather than tickwork's leases.
 */
import { until } from "../wait.js";
import type { QueueFault } from "./queue-run.js";

export const sigstop: QueueFault = {
  planned: { full: 3, quick: 1 },
  describe: () => "SIGSTOP of a busy worker until its jobs ran elsewhere (past the lease), then SIGCONT",
  async inject(ctl) {
    const { env, flight } = ctl;
    const { settings } = env;
    for (let tries = 0; ; tries++) {
      const { worker } = await ctl.busyWorker();
      await worker.freeze();
      // What it holds now that it is stopped (the ledger no longer moves): started, not finished.
      const inFlight = flight.of(worker.pid);
      if (inFlight.length === 0) {
        worker.thaw();
        if (tries < 50) continue;
        throw new Error("every frozen worker had just finished its jobs");
      }
      ctl.record("fault.freeze", { target: worker.pid, inFlight: inFlight.length, jobs: inFlight.map((f) => f.item) });
      if (!env.sqliteWritable()) {
        worker.thaw();
        ctl.record("fault.thaw", { target: worker.pid, heldWriteLock: true });
        ctl.record("note", { text: "a freeze landed inside a SQLite write transaction; undone at once" });
        if (tries < 20) continue;
        throw new Error("every freeze landed inside a SQLite write transaction");
      }
      // Frozen until every job it held ran again elsewhere: its lease lapsed and it was rescued.
      const rerunElsewhere = () => inFlight.every((f) => flight.startsOf(f.item).some((s) => s.attempt > f.attempt && s.pid !== worker.pid));
      const limit = 3 * (settings.leaseMs + settings.rescueMs) + 30_000;
      const waited = await until(rerunElsewhere, "the frozen worker's jobs to run elsewhere", limit, 50).then(
        () => null,
        (error: unknown) => String(error),
      );
      worker.thaw();
      ctl.record("fault.thaw", { target: worker.pid });
      if (waited) ctl.record("note", { text: waited });
      // Once thawed, its handlers finish and their completions are refused (the verdict checks the ledger).
      await until(
        () => inFlight.every((f) => flight.finished(worker.pid, f.item)),
        "the thawed worker's handlers to finish",
        30_000,
        50,
      ).catch(() => {});
      return "freezes";
    }
  },
};
