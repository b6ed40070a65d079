/** Repeated SIGKILL of a worker that has jobs in flight, under a backlog; each is replaced at once. */
import type { QueueFault } from "./queue-run.js";

export const sigkill: QueueFault = {
  planned: { full: 10, quick: 3 },
  describe: (env) => `SIGKILL of a busy worker every ${env.settings.gapMs[0] / 1000}-${env.settings.gapMs[1] / 1000} s, replaced at once`,
  async inject(ctl) {
    const { worker, inFlight } = await ctl.busyWorker();
    const at = Date.now();
    await worker.kill();
    ctl.record("fault.kill", { target: worker.pid, at, dead: Date.now(), inFlight: inFlight.length });
    // The next kill waits for the replacement: killing every worker before any replacement runs would
    // measure process start-up, not tickwork's recovery.
    await ctl.spawnWorker();
    return "kills";
  },
};
