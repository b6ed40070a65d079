import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT_CONTEXT, context, createTraceState, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { linkFrom, traceContextOf, type SpanLike } from "../../src/core/tracing.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { sqlite } from "../../src/store/sqlite.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { recordingTracer } from "../support/tracing.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

/** A span that is only a context: what traceContextOf reads. */
function spanWith(ctx: { traceId: string; spanId: string; traceFlags: number; traceState?: ReturnType<typeof createTraceState> }): SpanLike {
  return { spanContext: () => ctx, setAttribute: () => undefined, setStatus: () => undefined, recordException: () => {}, end: () => {} };
}

let tw: Tickwork | undefined;
let dir: string | undefined;
afterEach(async () => {
  await tw?.stop();
  tw = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("the stored trace context is a W3C carrier", () => {
  it("is the object a W3C propagator extracts, tracestate included, and parses back to the same context", () => {
    const stored = traceContextOf(spanWith({ traceId: TRACE, spanId: SPAN, traceFlags: 1, traceState: createTraceState("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7") }))!;
    expect(JSON.parse(stored)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" });

    const extracted = trace.getSpanContext(new W3CTraceContextPropagator().extract(ROOT_CONTEXT, JSON.parse(stored), { get: (c, k) => (c as Record<string, string>)[k], keys: (c) => Object.keys(c as object) }))!;
    expect(extracted).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(extracted.traceState?.serialize()).toBe("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");

    const link = linkFrom(stored)!;
    expect(link.context).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(link.context.traceState?.get("rojo")).toBe("00f067aa0ba902b7");
    expect(link.context.traceState?.set("new", "1").serialize()).toBe("new=1,congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    expect(link.context.traceState?.unset("congo").serialize()).toBe("rojo=00f067aa0ba902b7");
    // An unsampled context is stored as it is (the sampling decision travels with it).
    expect(JSON.parse(traceContextOf(spanWith({ traceId: TRACE, spanId: SPAN, traceFlags: 0 }))!)).toEqual({ traceparent: `00-${TRACE}-${SPAN}-00` });
  });

  it("stores nothing for a span without a valid context, and links to nothing for a carrier that does not parse", () => {
    expect(traceContextOf(spanWith({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 }))).toBeNull();
    expect(traceContextOf(spanWith({ traceId: TRACE, spanId: "0".repeat(16), traceFlags: 1 }))).toBeNull();
    expect(traceContextOf(spanWith({ traceId: TRACE.toUpperCase(), spanId: SPAN, traceFlags: 1 }))).toBeNull();
    for (const bad of [
      null,
      "",
      "not json",
      "{}",
      JSON.stringify({ traceparent: 42 }),
      JSON.stringify({ traceparent: `ff-${TRACE}-${SPAN}-01` }),
      JSON.stringify({ traceparent: `00-${"0".repeat(32)}-${SPAN}-01` }),
      JSON.stringify({ traceparent: `00-${TRACE}-${"0".repeat(16)}-01` }),
      JSON.stringify({ traceparent: `00-${TRACE}-${SPAN}-01-extra` }),
      JSON.stringify({ traceparent: `00-${TRACE.toUpperCase()}-${SPAN}-01` }),
    ]) {
      expect(linkFrom(bad), String(bad)).toBeNull();
    }
    // A later version may carry more fields; its first four are read.
    expect(linkFrom(JSON.stringify({ traceparent: `01-${TRACE}-${SPAN}-01-later` }))?.context).toMatchObject({ traceId: TRACE, spanId: SPAN });
    // Malformed tracestate members are dropped, the rest kept.
    expect(linkFrom(JSON.stringify({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "ok=1, BAD KEY=2 ,also=3" }))!.context.traceState!.serialize()).toBe("ok=1,also=3");
  });

  it("an enqueue under a context with tracestate hands it to the run's link; a job whose stored context is garbage still runs, unlinked", async () => {
    const rec = recordingTracer();
    dir = mkdtempSync(join(tmpdir(), "tickwork-trace-"));
    const path = join(dir, "tickwork.db");
    tw = await createTickwork({ store: sqlite(path), clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {}, handleSignals: false, tracer: rec.tracer });
    const mail = tw.queue("mail", { handler: () => "sent" });
    // An incoming request's context, as a propagator extracted it: remote, with vendor state.
    const incoming = trace.setSpanContext(context.active(), { traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true, traceState: createTraceState("vendor=abc") });
    const job = await context.with(incoming, () => mail.enqueue({}));
    const broken = await mail.enqueue({});
    const db = new Database(path);
    try {
      db.prepare(`UPDATE tickwork_jobs SET trace_context = 'garbage' WHERE id = ?`).run(Number(broken.id));
    } finally {
      db.close();
    }
    await tw.tick();

    const runs = new Map(rec.named("process mail").map((s) => [s.attributes["messaging.message.id"], s]));
    const enqueue = rec.named("enqueue mail").find((s) => s.attributes["messaging.message.id"] === job.id)!;
    expect(enqueue.spanContext().traceId).toBe(TRACE);
    const link = runs.get(job.id)!.links[0]!.context;
    expect(link).toMatchObject({ traceId: TRACE, spanId: enqueue.spanContext().spanId });
    expect(link.traceState?.serialize()).toBe("vendor=abc");
    expect(runs.get(broken.id)!.links).toEqual([]);
    expect(await tw.jobs.get(broken.id)).toMatchObject({ status: "succeeded" });
  });
});
