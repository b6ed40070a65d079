import { fileURLToPath } from "node:url";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { FixtureProcess, spawnFixture, type Line } from "../crash/fixtures/child-process.js";
import { newTarget, openStore } from "../crash/fixtures/target.js";
import { recordingTracer, type SpanJson } from "../support/tracing.js";
import type { TracedWorkerConfig } from "./fixtures/traced-worker.js";

const WORKER = fileURLToPath(new URL("./fixtures/traced-worker.ts", import.meta.url));

let teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  const steps = teardown.reverse();
  teardown = [];
  for (const step of steps) await step().catch(() => {});
});

const spanLine = (name: string, jobId?: string) => (line: Line) =>
  line.event === "span" && (line.span as SpanJson).name === name && (jobId === undefined || (line.span as SpanJson).attributes["messaging.message.id"] === jobId);

describe("a job run in another process links to the span that enqueued it (PostgreSQL, two processes)", () => {
  it("the worker's process span starts its own trace and links to this process's enqueue span; the handler's own span is its child", async () => {
    const { target, cleanup } = newTarget("postgres");
    teardown.push(cleanup);

    // This process only enqueues (no handler): the job can only run in the worker.
    const rec = recordingTracer();
    const tw = await createTickwork({ store: openStore(target), logger: () => {}, handleSignals: false, tracer: rec.tracer });
    teardown.push(() => tw.stop());
    const traced = tw.queue<{ order: string }>("traced", {});

    const config: TracedWorkerConfig = { target, instanceId: `traced-${process.pid}` };
    const worker = new FixtureProcess(spawnFixture(WORKER, config), "traced worker", 30_000);
    teardown.push(() => worker.kill());
    await worker.ready;

    const job = await rec.tracer.startActiveSpan("place order", async (span) => {
      try {
        return await traced.enqueue({ order: "o-1" });
      } finally {
        span.end();
      }
    });
    expect(await tw.jobs.wait(job.id, { timeout: "20s" })).toEqual({ pid: worker.pid });

    const enqueue = rec.named("enqueue traced")[0]!;
    expect(enqueue.parentSpanContext?.spanId).toBe(rec.named("place order")[0]!.spanContext().spanId);
    const run = (await worker.waitFor(spanLine("process traced", job.id), "the run's span", 20_000)).span as SpanJson;
    const charge = (await worker.waitFor(spanLine("charge card"), "the handler's own span", 20_000)).span as SpanJson;

    expect(run.links).toEqual([{ traceId: enqueue.spanContext().traceId, spanId: enqueue.spanContext().spanId, traceFlags: 1, isRemote: true }]);
    expect(run.traceId).not.toBe(enqueue.spanContext().traceId);
    expect(run.parentSpanId).toBeNull();
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(run.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": "traced",
      "messaging.message.id": job.id,
      "tickwork.job.attempt": 1,
      "tickwork.job.outcome": "succeeded",
    });
    expect(charge.traceId).toBe(run.traceId);
    expect(charge.parentSpanId).toBe(run.spanId);
  });
});
