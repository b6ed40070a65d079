/**
 * The worker process of the round-trip workload: runs one system's worker on the namespace the
 * benchmark created, each job answering `{ n }` (its payload's number), until SIGTERM.
 * Usage: tsx round-trip-worker.ts <tickwork|bullmq> <schema | key prefix> <concurrency>
 * Prints "ready" once the worker runs.
 */
import { Worker } from "bullmq";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL } from "../fixtures.js";
import { ROUND_TRIP_QUEUE, type RoundTripPayload } from "./round-trip.js";
import { redisConnection } from "./servers.js";

const [system, namespace, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
if (!namespace || !Number.isInteger(concurrency) || concurrency < 1) throw new Error("usage: round-trip-worker.ts <tickwork|bullmq> <namespace> <concurrency>");

let stop: () => Promise<void>;
if (system === "tickwork") {
  const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema: namespace }), migrate: false, handleSignals: false, logLevel: "warn" });
  tw.queue<RoundTripPayload>(ROUND_TRIP_QUEUE, { concurrency, handler: (job) => ({ n: job.payload.n }) });
  await tw.start();
  stop = () => tw.stop();
} else if (system === "bullmq") {
  const worker = new Worker<RoundTripPayload>(ROUND_TRIP_QUEUE, async (job) => ({ n: job.data.n }), { connection: redisConnection(), prefix: namespace, concurrency });
  await worker.waitUntilReady();
  stop = () => worker.close();
} else {
  throw new Error(`unknown system ${system}`);
}
process.once("SIGTERM", () => {
  void stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
