import { SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import type { LogEvent } from "../../src/core/logger.js";
import type { TracerLike } from "../../src/core/tracing.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { fakeClock, type FakeClock } from "../../src/testing/fake-clock.js";
import { newTarget, openCrashDb, openStore, type Target } from "../crash/fixtures/target.js";
import { recordingTracer, type RecordingTracer } from "../support/tracing.js";

let teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  const steps = teardown.reverse();
  teardown = [];
  for (const step of steps) await step();
});

interface Setup {
  tw: Tickwork;
  /** The fake clock of an engine driven by ticks. */
  clock: FakeClock | undefined;
  rec: RecordingTracer;
  events: LogEvent[];
  /** `trace_context` of every job row, by id. */
  traceContexts(): Promise<Map<string, string | null>>;
}

/** A fresh database of `kind`, an engine on it with a fake clock, and a recording SDK (the engine traces only if `traced`). */
async function setup(kind: Target["kind"], { traced = true, tracer, start = false }: { traced?: boolean; tracer?: TracerLike; start?: boolean } = {}): Promise<Setup> {
  const { target, cleanup } = newTarget(kind);
  teardown.push(cleanup);
  const rec = recordingTracer();
  const events: LogEvent[] = [];
  const clock = start ? undefined : fakeClock("2026-01-01T00:00:00Z");
  const tw = await createTickwork({
    store: openStore(target),
    logger: (e) => events.push(e),
    handleSignals: false,
    // A started engine runs on the system clock (its hand-offs and timers are real).
    ...(clock ? { clock } : { pollInterval: "50ms" }),
    ...(traced ? { tracer: tracer ?? rec.tracer } : {}),
  });
  teardown.push(() => tw.stop());
  const db = openCrashDb(target);
  teardown.push(() => db.close());
  return {
    tw,
    clock,
    rec,
    events,
    async traceContexts() {
      const rows = await db.query<{ id: string; trace_context: string | null }>(`SELECT CAST(id AS TEXT) AS id, trace_context FROM tickwork_jobs ORDER BY id`);
      return new Map(rows.map((r) => [r.id, r.trace_context]));
    },
  };
}

/** Runs `fn` inside an active span of the caller's own (a request handler's, say), ended when `fn` settles. */
function inCallerSpan<T>(rec: RecordingTracer, fn: (span: Span) => Promise<T>): Promise<T> {
  return rec.tracer.startActiveSpan("checkout", async (span) => {
    try {
      return await fn(span);
    } finally {
      span.end();
    }
  });
}

function only(spans: ReadableSpan[], what: string): ReadableSpan {
  expect(spans, what).toHaveLength(1);
  return spans[0]!;
}

/** The W3C carrier a job row holds for the span that enqueued it. */
function carrierOf(span: ReadableSpan): string {
  const { traceId, spanId } = span.spanContext();
  return JSON.stringify({ traceparent: `00-${traceId}-${spanId}-01` });
}

function linkedTo(span: ReadableSpan): { traceId: string; spanId: string }[] {
  return span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId }));
}

function ids(span: ReadableSpan): { traceId: string; spanId: string } {
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

async function untilIdle(tw: Tickwork, clock?: FakeClock) {
  for (let i = 0; i < 20; i++) {
    if ((await tw.tick()).ran === 0) return;
    await clock?.advance("1s");
  }
}

describe.each(["sqlite", "postgres"] as const)("a job's run is a new trace linked to the span that enqueued it (%s)", (kind) => {
  it("the enqueue is a producer span under the caller's span; the run a consumer span of its own trace, linked to it, active while the handler runs", async () => {
    const { tw, rec, events, traceContexts } = await setup(kind);
    expect(events.find((e) => e.event === "engine.started")).toMatchObject({ tracing: "the tracer option" });
    let inner: Span | undefined;
    const mail = tw.queue<{ to: string }>("mail", {
      handler: async () => {
        // A span the handler starts (an instrumented client's, say) is a child of the run's span.
        inner = rec.tracer.startSpan("smtp send");
        inner.end();
        return "sent";
      },
    });
    const job = await inCallerSpan(rec, () => mail.enqueue({ to: "a@example.com" }));
    await tw.tick();

    const checkout = only(rec.named("checkout"), "the caller's span");
    const enqueue = only(rec.named("enqueue mail"), "the enqueue span");
    const run = only(rec.named("process mail"), "the run's span");
    expect(enqueue.kind).toBe(SpanKind.PRODUCER);
    expect(enqueue.spanContext().traceId).toBe(checkout.spanContext().traceId);
    expect(enqueue.parentSpanContext?.spanId).toBe(checkout.spanContext().spanId);
    expect(enqueue.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "send",
      "messaging.operation.name": "enqueue",
      "messaging.destination.name": "mail",
      "messaging.message.id": job.id,
      "tickwork.job.duplicate": false,
    });

    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(enqueue.spanContext().traceId);
    expect(linkedTo(run)).toEqual([ids(enqueue)]);
    expect(run.links[0]!.context.isRemote).toBe(true);
    expect(run.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": "mail",
      "messaging.message.id": job.id,
      "tickwork.job.attempt": 1,
      "tickwork.job.outcome": "succeeded",
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(only(rec.named("smtp send"), "the handler's own span").parentSpanContext?.spanId).toBe(run.spanContext().spanId);

    expect(await traceContexts()).toEqual(new Map([[job.id, carrierOf(enqueue)]]));
  });

  it("a failed attempt's span is failed with the error; the retry is another run linked to the same enqueue", async () => {
    const { tw, rec } = await setup(kind);
    let calls = 0;
    const charges = tw.queue("charges", {
      retry: { maxAttempts: 2, backoff: () => 0 },
      handler: () => {
        if (++calls === 1) throw new TypeError("card declined");
        return "charged";
      },
    });
    const job = await charges.enqueue({ amount: 5 });
    await untilIdle(tw);

    const enqueue = only(rec.named("enqueue charges"), "the enqueue span");
    const [first, second] = rec.named("process charges");
    expect(rec.named("process charges")).toHaveLength(2);
    expect(first!.attributes).toMatchObject({ "messaging.message.id": job.id, "tickwork.job.attempt": 1, "tickwork.job.outcome": "retry", "error.type": "TypeError" });
    expect(first!.status).toEqual({ code: SpanStatusCode.ERROR, message: "card declined" });
    expect(first!.events.map((e) => [e.name, e.attributes?.["exception.type"], e.attributes?.["exception.message"]])).toEqual([["exception", "TypeError", "card declined"]]);
    expect(second!.attributes).toMatchObject({ "tickwork.job.attempt": 2, "tickwork.job.outcome": "succeeded" });
    expect(second!.status.code).toBe(SpanStatusCode.UNSET);
    expect(linkedTo(first!)).toEqual([ids(enqueue)]);
    expect(linkedTo(second!)).toEqual([ids(enqueue)]);
    // Two runs, two traces.
    expect(first!.spanContext().traceId).not.toBe(second!.spanContext().traceId);
  });

  it("every way of enqueueing stores its span's context with each job it writes: many at once, a keyed mode, a flow, a batch", async () => {
    const { tw, clock, rec, traceContexts } = await setup(kind);
    const work = tw.queue<{ n: number }>("work", { handler: () => "done" });
    const summary = tw.queue("summary", { handler: () => "summed" });
    const many = await work.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    const debounced = await work.enqueue({ n: 3 }, { key: "k", debounce: "1s" });
    const flow = await summary.enqueueFlow({ payload: {}, children: [{ queue: "work", payload: { n: 4 } }] });
    const batch = await tw.batch([{ n: 5 }, { n: 6 }], { queue: "work", onComplete: { queue: "summary", payload: {} } });

    const enqueues = rec.spans().filter((s) => s.name.startsWith("enqueue "));
    expect(enqueues.map((s) => [s.name, s.attributes["messaging.batch.message_count"]])).toEqual([
      ["enqueue work", 2],
      ["enqueue work", undefined],
      ["enqueue summary", 2],
      ["enqueue summary", 3],
    ]);
    const [manySpan, keyedSpan, flowSpan, batchSpan] = enqueues as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
    const expected = new Map<string, string>([
      [many[0]!.id, carrierOf(manySpan)],
      [many[1]!.id, carrierOf(manySpan)],
      [debounced.id, carrierOf(keyedSpan)],
      [flow.id, carrierOf(flowSpan)],
      [flow.children[0]!.id, carrierOf(flowSpan)],
      [batch.id, carrierOf(batchSpan)],
      ...batch.jobs.map((id): [string, string] => [id, carrierOf(batchSpan)]),
    ]);
    expect(await traceContexts()).toEqual(expected);

    // Each job's run links to the enqueue that wrote it (a debounced job is due a second later).
    await untilIdle(tw, clock);
    const runs = rec.spans().filter((s) => s.name.startsWith("process "));
    expect(runs).toHaveLength(expected.size);
    const enqueueOf = new Map(enqueues.map((s) => [carrierOf(s), ids(s)]));
    for (const run of runs) {
      expect(linkedTo(run)).toEqual([enqueueOf.get(expected.get(String(run.attributes["messaging.message.id"]))!)]);
    }
  });

  it("a bulk enqueue (written in slices on PostgreSQL) stores its one span's context with every job", async () => {
    const { tw, rec, traceContexts } = await setup(kind);
    const work = tw.queue<{ n: number; pad: string }>("work", {});
    // About 250 KB of payloads: more than one slice of PostgreSQL's sliced insert.
    const jobs = await work.enqueueMany(Array.from({ length: 1_200 }, (_, n) => ({ payload: { n, pad: "x".repeat(200) } })));
    const enqueue = only(rec.named("enqueue work"), "the bulk enqueue's span");
    expect(enqueue.attributes["messaging.batch.message_count"]).toBe(1_200);
    const stored = await traceContexts();
    expect(stored.size).toBe(1_200);
    expect(new Set(jobs.map((j) => stored.get(j.id)))).toEqual(new Set([carrierOf(enqueue)]));
  });

  it("a job handed straight to this process's idle worker carries the link too", async () => {
    const { tw, rec } = await setup(kind, { start: true });
    tw.queue<{ n: number }>("fast", { handler: () => "ok" });
    await tw.start();
    // An idle worker that has caught up takes a new job straight from the insert (status running):
    // enqueue until one is, each run to its end first so the worker is idle again.
    let handedOff: string | undefined;
    for (let n = 0; n < 50 && !handedOff; n++) {
      const job = await tw.enqueue("fast", { n });
      await tw.jobs.wait(job.id, { timeout: "10s" });
      if (job.status === "running") handedOff = job.id;
    }
    expect(handedOff, "no enqueue was handed off to the idle worker").toBeDefined();
    const enqueue = rec.named("enqueue fast").find((s) => s.attributes["messaging.message.id"] === handedOff)!;
    const run = rec.named("process fast").find((s) => s.attributes["messaging.message.id"] === handedOff)!;
    expect(linkedTo(run)).toEqual([ids(enqueue)]);
  });

  it("a batch handler's one run links to the enqueue of each of its jobs", async () => {
    const { tw, rec } = await setup(kind);
    const bulk = tw.queue<{ n: number }>("bulk", {
      batch: { size: 10, wait: 0 },
      handler: async (jobs) => jobs.map((j) => (j.payload.n === 2 ? new Error("no 2") : "ok")),
    });
    await bulk.enqueue({ n: 1 });
    await bulk.enqueueMany([{ payload: { n: 2 } }, { payload: { n: 3 } }]);
    await tw.tick();

    const [single, pair] = rec.named("enqueue bulk") as [ReadableSpan, ReadableSpan];
    const run = only(rec.named("process bulk"), "the batch's run");
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.attributes).toMatchObject({ "messaging.batch.message_count": 3, "tickwork.batch.failed": 1, "messaging.destination.name": "bulk" });
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: "1 of 3 jobs failed; first: Error: no 2" });
    expect(linkedTo(run)).toEqual([ids(single), ids(pair), ids(pair)]);
  });

  it("without a tracer nothing is traced: no span of tickwork's, and no job row holds a trace context", async () => {
    const { tw, rec, events, traceContexts } = await setup(kind, { traced: false });
    expect(events.find((e) => e.event === "engine.started")).toMatchObject({ tracing: "off" });
    const mail = tw.queue("mail", { handler: () => "sent" });
    const job = await inCallerSpan(rec, () => mail.enqueue({}));
    const flow = await mail.enqueueFlow({ payload: {}, children: [{ queue: "mail", payload: {} }] });
    await untilIdle(tw);
    expect(rec.spans().map((s) => s.name)).toEqual(["checkout"]);
    expect(await traceContexts()).toEqual(new Map([[job.id, null], [flow.id, null], [flow.children[0]!.id, null]]));
    expect((await tw.jobs.get(flow.id))!.status).toBe("succeeded");
  });

  it("a tracer with no SDK behind it (the API's no-op) stores nothing and runs the jobs as usual", async () => {
    const { tw, traceContexts } = await setup(kind, { tracer: trace.getTracer("tickwork") });
    const mail = tw.queue("mail", { handler: () => "sent" });
    const job = await mail.enqueue({});
    await tw.tick();
    expect(await traceContexts()).toEqual(new Map([[job.id, null]]));
    expect((await tw.jobs.get(job.id))!.status).toBe("succeeded");
  });
});

describe("the tracer option", () => {
  it("refuses what is not a Tracer, naming the option, before anything is written", async () => {
    const { target, cleanup } = newTarget("sqlite");
    teardown.push(cleanup);
    const error = await createTickwork({ store: openStore(target), tracer: {} as TracerLike, logger: () => {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(/^createTickwork: tracer: expected an OpenTelemetry Tracer/);
  });
});
