/**
 * A real OpenTelemetry SDK for the tracing tests: a tracer whose finished spans land in an in-memory
 * exporter, and active spans that follow async calls (AsyncLocalStorage), as the Node SDK sets up.
 * Nothing here imports vitest: the fixture child processes use it too.
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { TracerLike } from "../../src/core/tracing.js";
import { spanJson, type SpanJson } from "./span-json.js";

export { spanJson, type SpanJson };

let contextManager: AsyncLocalStorageContextManager | undefined;

export interface RecordingTracer {
  /** What the engine's `tracer` option gets, as a user passes `trace.getTracer("tickwork")`. */
  tracer: TracerLike & ReturnType<BasicTracerProvider["getTracer"]>;
  /** Every span ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[];
}

export function recordingTracer(processors: SpanProcessor[] = []): RecordingTracer {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), ...processors] });
  const tracer = provider.getTracer("tickwork");
  const spans = () => exporter.getFinishedSpans();
  return { tracer, spans, named: (name) => spans().filter((s) => s.name === name) };
}

/** A processor that hands each span to `onEnd` as JSON the moment it ends. */
export function printingProcessor(onEnd: (span: SpanJson) => void): SpanProcessor {
  return {
    onStart: () => {},
    onEnd: (span) => onEnd(spanJson(span)),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}
