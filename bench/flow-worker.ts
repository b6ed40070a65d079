/**
 * A worker process of the flow-control benchmark, run as
 * `node --import tsx bench/flow-worker.ts '<FlowWorkerConfig JSON>'` by `flow.ts`.
 *
 * It opens its own store on the target, declares the benchmark's queue with a handler that notes
 * when each job started and of which group, prints `fixture.ready`, and starts the engine only when
 * the benchmark sends `{ go: true }` (so every process starts together, after its start-up). On
 * `{ stop: true }` it stops the engine, prints one `flow.starts` line and exits. The engine's
 * warnings and errors are printed as JSON lines, for the benchmark to list.
 */
import { createTickwork, type LogEvent } from "../src/index.js";
import { postgres } from "../src/store/postgres.js";
import { sqlite } from "../src/store/sqlite.js";
import { flowQueueOptions, type FlowPayload, type FlowWorkerConfig, type StartsLine } from "./flow-shared.js";

// Started with an IPC channel: if the benchmark dies without stopping this process, the channel
// closes and the process ends rather than run on as an orphan.
process.on("disconnect", () => process.exit(1));

const config = JSON.parse(process.argv[2] ?? "") as FlowWorkerConfig;
const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

const at: number[] = [];
const groups: number[] = [];
const throttled: Record<string, number> = {};

const { target } = config;
const tw = await createTickwork({
  // The default pool (10 connections): a benchmark measures the store as a user would run it.
  store: target.kind === "postgres" ? postgres({ url: target.url, schema: target.schema }) : sqlite(target.path),
  instanceId: config.instanceId,
  logger: (event: LogEvent) => {
    if (event.event === "queue.throttled") throttled[String(event.by)] = (throttled[String(event.by)] ?? 0) + 1;
    if (event.level === "warn" || event.level === "error" || event.level === "critical") print({ ...event, pid: process.pid });
  },
  handleSignals: false,
  migrate: false,
});

const wait = config.handlerMs > 0 ? () => new Promise<void>((resolve) => setTimeout(resolve, config.handlerMs)) : undefined;
tw.queue<FlowPayload>(config.queue, {
  ...flowQueueOptions(config.concurrency, config.limits),
  handler: async (job) => {
    // Tenths of a millisecond: two processes' starts in the same millisecond keep their order.
    at.push(Math.round((performance.timeOrigin + performance.now()) * 10) / 10);
    groups.push(job.payload.g);
    if (wait) await wait();
  },
});

process.on("message", (message: { go?: boolean; stop?: boolean }) => {
  if (message.go) {
    tw.start().catch((error: unknown) => print({ event: "flow.error", level: "error", error: String(error) }));
  } else if (message.stop) {
    void (async () => {
      await tw.stop();
      const line: StartsLine = { event: "flow.starts", at, groups, throttled };
      // A pipe to the parent is written synchronously on Linux; the callback makes it so elsewhere too.
      process.stdout.write(`${JSON.stringify(line)}\n`, () => process.exit(0));
    })();
  }
});

print({ event: "fixture.ready", pid: process.pid, instanceId: config.instanceId });
