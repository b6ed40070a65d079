/**
 * The app as a process of its own, for the crash test: `node --import tsx app-process.ts '<AppProcessConfig JSON>'`.
 * It opens the app on the given database with the system clock, starts the engine (the pipeline on
 * its cadence, deliveries sent as the budget allows) and runs the pipeline once at once, through the
 * scheduler so it never overlaps a scheduled run. It prints JSON lines on stdout: tickwork's events
 * and `fixture.ready`. The test ends it with SIGKILL.
 */
import { schedule } from "../../src/index.js";
import { PIPELINE_TASK, createAccountExtremesApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";

export interface AppProcessConfig {
  database: DatabaseTarget;
  receiverUrl: string;
  secret: string;
  /** The send timeout; the lease on a batch in flight is twice this plus 10 s. */
  sendTimeout: string;
  cadence: string;
  /** Retry steps (seed 000's are minutes and hours; a test cannot wait for them). */
  retry: string[];
}

// Started with an IPC channel: if the test process dies without ending this one, the channel
// closes and this process ends rather than run on as an orphan.
process.on("disconnect", () => process.exit(1));

const config = JSON.parse(process.argv[2] ?? "") as AppProcessConfig;
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const app = await createAccountExtremesApp({
  database: config.database,
  receiverUrl: config.receiverUrl,
  secret: config.secret,
  sendTimeout: config.sendTimeout,
  cadence: config.cadence,
  retry: schedule(config.retry),
  logger: print,
  logLevel: "info",
});
await app.tw.start();
process.once("SIGTERM", () => void app.stop().finally(() => process.exit(0)));
const [first] = await app.tw.scheduler.runNow(PIPELINE_TASK);
print({ event: "fixture.ready", pid: process.pid, pipeline: first });
