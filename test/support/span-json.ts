/**
 * A finished span as plain JSON, as the tracing tests read spans: printed by a child process for its
 * parent, or returned over RPC by a Durable Object. Types only from the SDK, so that a worker bundled
 * for workerd can import it beside the SDK it bundles.
 */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** A finished span as plain JSON: what a child process prints for its parent to read. */
export interface SpanJson {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  links: { traceId: string; spanId: string; traceFlags: number; isRemote: boolean }[];
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
}

export function spanJson(span: ReadableSpan): SpanJson {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, traceFlags: l.context.traceFlags, isRemote: l.context.isRemote === true })),
    attributes: { ...span.attributes },
    status: { ...span.status },
  };
}
