/**
 * The app as a server process of its own, for the tests that need real processes (a crash, two
 * servers on one database): `node --import tsx server-process.ts '<ServerProcessConfig JSON>'`.
 * It prints JSON lines on stdout: `server.ready` with its URL, `server.held` when a request it was
 * told to hold reaches the hold point (that request then never continues), and tickwork's events.
 * SIGTERM stops it gracefully; the crash test ends it with SIGKILL instead.
 */
import type { DatabaseTarget } from "./database.js";
import { createPaperOrdersApp } from "./app.js";
import type { EffectStep } from "./portfolio.js";

export type HoldPoint = "before-effect" | "after-effect";

export interface ServerProcessConfig {
  database: DatabaseTarget;
  /** tickwork's `idempotency.staleAfter`: how long a dead server's claim blocks its key. */
  staleAfter: string;
  /** Requests (by request id) that stop at `point` and never go on: the server is killed there. */
  hold?: { point: HoldPoint; requestIds: string[] };
}

// Started with an IPC channel: if the test process dies without ending this one, the channel
// closes and this server ends rather than run on as an orphan.
process.on("disconnect", () => process.exit(1));

const config = JSON.parse(process.argv[2] ?? "") as ServerProcessConfig;
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const hold = (point: HoldPoint) => async (step: EffectStep) => {
  if (config.hold?.point !== point || step.requestId === null || !config.hold.requestIds.includes(step.requestId)) return;
  print({ event: "server.held", point, ...step });
  // Never resolves: the key stays claimed (and renewed) until the process dies.
  await new Promise(() => {});
};

const app = await createPaperOrdersApp({
  database: config.database,
  idempotency: { staleAfter: config.staleAfter },
  logger: print,
  logLevel: "info",
  hooks: { beforeEffect: hold("before-effect"), afterEffect: hold("after-effect") },
});
const server = await app.listen();
process.once("SIGTERM", () => {
  void app.stop().finally(() => process.exit(0));
});
print({ event: "server.ready", url: server.url, pid: process.pid });
