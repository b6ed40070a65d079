/**
 * Connection-pool exhaustion. Each worker's application shares one pool of `poolMax` connections with
 * tickwork; in turn, one worker's application takes every connection of it for 0.75 to 1.75 leases
 * (tickwork's claims, heartbeats and completions wait for a connection meanwhile), and,
 * on the run's own cluster, the controller fills every connection slot the server has left for
 * ordinary roles (new connections are refused) for a while.
 */
import pg from "pg";
import { namedUrl } from "../target.js";
import { pause, until } from "../wait.js";
import type { QueueFault } from "./queue-run.js";

export const pool: QueueFault = {
  planned: { full: 6, quick: 2 },
  sharedPool: true,
  describe: (env) => `pool of ${env.settings.poolMax} shared with the application, hogged by it for 0.75-1.75 leases${env.server?.own ? "; alternately every server connection slot taken" : ""}`,
  async inject(ctl, i) {
    const { env } = ctl;
    const { settings } = env;
    // Up to almost twice the lease: the heartbeats of the hogging worker's jobs wait that long, so some
    // leases lapse and those jobs are rescued while their handlers still run.
    const ms = Math.round(env.random.between(settings.leaseMs * 0.75, settings.leaseMs * 1.75));
    if (i % 2 === 1 && env.server?.own && env.target.kind === "postgres") {
      // Fill the server: connect as the workers' role until it refuses, hold, let go.
      const url = namedUrl(env.target.appUrl, `${env.target.appPrefix}-hog`);
      const clients: pg.Client[] = [];
      const start = Date.now();
      for (let n = 0; n < 200; n++) {
        const c = new pg.Client({ connectionString: url });
        c.on("error", () => {});
        try {
          await c.connect();
          clients.push(c);
        } catch {
          break;
        }
      }
      await pause(ms);
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
      ctl.record("fault.window", { what: "server connection slots full", start, end: Date.now(), held: clients.length });
      return "server slots filled";
    }
    const worker = env.random.pick(ctl.workers());
    const start = Date.now();
    worker.send({ hog: ms });
    const released = () => ctl.flight.find("hog.released", (r) => r.pid === worker.pid && r.t >= start);
    await until(released, `worker ${worker.pid}'s application to give its pool back`, ms + 120_000, 50);
    ctl.record("fault.window", { what: `pool of worker ${worker.pid} hogged`, start, end: Date.now(), ms });
    return "pool hogs";
  },
};
