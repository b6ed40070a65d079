/**
 * OpenTelemetry tracing, without depending on OpenTelemetry. The engine's `tracer` option takes a
 * Tracer (`trace.getTracer("tickwork")` from @opentelemetry/api) and calls it through the few
 * members typed below, which the real one has. So the core imports nothing from the package, neither
 * at run time nor in its types: it bundles for workerd as it is, a user without the package meets no
 * missing type, and an engine given no tracer does none of this work (the modules check for a tracer
 * before they build a span's name or attributes).
 *
 * A job's creation context travels in its row as W3C Trace Context text, written and read here
 * rather than through the API's propagators: the engine holds no propagation API (only the Tracer it
 * was given), and a process configured with another propagator (B3, say) must still read what every
 * other process stored. The format is small and fixed: `version-traceid-spanid-flags`.
 */

export type TraceAttributeValue = string | number | boolean;
export type TraceAttributes = Record<string, TraceAttributeValue | undefined>;

/** OpenTelemetry's TraceState: vendor entries carried beside the trace id (W3C `tracestate`). */
export interface TraceStateLike {
  set(key: string, value: string): TraceStateLike;
  unset(key: string): TraceStateLike;
  get(key: string): string | undefined;
  serialize(): string;
}

/** OpenTelemetry's SpanContext. */
export interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: TraceStateLike;
}

/** The members of OpenTelemetry's Span that tickwork calls. */
export interface SpanLike {
  spanContext(): SpanContextLike;
  setAttribute(key: string, value: TraceAttributeValue): unknown;
  setStatus(status: { code: 0 | 1 | 2; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

/** OpenTelemetry's SpanKind values that tickwork uses (the API's enum, as numbers). */
export const SPAN_KIND = { INTERNAL: 0, PRODUCER: 3, CONSUMER: 4 } as const;

/** OpenTelemetry's SpanStatusCode.ERROR. */
const STATUS_ERROR = 2;

export interface SpanOptionsLike {
  kind?: (typeof SPAN_KIND)[keyof typeof SPAN_KIND];
  attributes?: TraceAttributes;
  links?: { context: SpanContextLike }[];
  /** A new trace, whatever context is active. */
  root?: boolean;
}

/**
 * What the `tracer` option takes: OpenTelemetry's Tracer (`trace.getTracer("tickwork")`) fits. Only
 * `startActiveSpan` is called: the span is active while the work inside it runs, so the spans of a
 * handler's own calls (an instrumented fetch, a database client) are its children.
 */
export interface TracerLike {
  startActiveSpan<T>(name: string, options: SpanOptionsLike, fn: (span: SpanLike) => T): T;
}

/** `messaging.system` on every messaging span: tickwork is the intermediary. */
export const MESSAGING_SYSTEM = "tickwork";

/**
 * The messaging semantic conventions' attributes of an operation: `type` is the convention's
 * category (create, send, process), `name` tickwork's own name for it, `destination` the queue,
 * delivery or fan-out.
 */
export function messagingAttributes(type: "send" | "process", name: string, destination: string): TraceAttributes {
  return {
    "messaging.system": MESSAGING_SYSTEM,
    "messaging.operation.type": type,
    "messaging.operation.name": name,
    "messaging.destination.name": destination,
  };
}

/**
 * Runs `fn` in a span that is active while it runs and ends when it settles; a throw marks the span
 * failed and is rethrown as it was.
 */
export function inSpan<T>(tracer: TracerLike, name: string, options: SpanOptionsLike, fn: (span: SpanLike) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span: SpanLike) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed by `error` (a thrown value, or the text a failure was recorded as). */
export function failSpan(span: SpanLike, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  // The conventions' error.type: the error's class, or "_OTHER" when the failure is not an Error.
  span.setAttribute("error.type", error instanceof Error ? error.name : "_OTHER");
  span.setStatus({ code: STATUS_ERROR, message });
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * A span's context as a W3C Trace Context carrier, `{"traceparent":"00-…","tracestate":"…"}` (the
 * object `propagation.extract` reads), to store with the job the span created; null for a span
 * without a valid context (a tracer with no SDK behind it): nothing is stored then.
 */
export function traceContextOf(span: SpanLike): string | null {
  const { traceId, spanId, traceFlags, traceState } = span.spanContext();
  if (!/^[0-9a-f]{32}$/.test(traceId) || traceId === ZERO_TRACE || !/^[0-9a-f]{16}$/.test(spanId) || spanId === ZERO_SPAN) return null;
  const traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
  const tracestate = traceState?.serialize();
  return JSON.stringify(tracestate ? { traceparent, tracestate } : { traceparent });
}

/**
 * The link to the span that created a job, from the carrier stored with it (see traceContextOf); null
 * when there is none or it does not parse (a row written by hand, a future format): a job is never
 * failed for its trace context.
 */
export function linkFrom(traceContext: string | null | undefined): { context: SpanContextLike } | null {
  if (!traceContext) return null;
  let carrier: { traceparent?: unknown; tracestate?: unknown };
  try {
    carrier = JSON.parse(traceContext) as typeof carrier;
  } catch {
    return null;
  }
  const match = typeof carrier?.traceparent === "string" ? TRACEPARENT.exec(carrier.traceparent) : null;
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is invalid; version 00 has exactly four fields (a later version may add some).
  if (version === "ff" || (version === "00" && rest !== undefined) || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  const context: SpanContextLike = { traceId, spanId, traceFlags: parseInt(flags, 16) & 0x01, isRemote: true };
  if (typeof carrier.tracestate === "string" && carrier.tracestate) context.traceState = W3CTraceState.parse(carrier.tracestate);
  return { context };
}

/** W3C `tracestate`: at most 32 `key=value` members, the most recent first. */
const MAX_MEMBERS = 32;
const MEMBER = /^([a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=([\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e])$/;

/** An immutable TraceState, as the API's own `createTraceState` makes: malformed members are dropped. */
class W3CTraceState implements TraceStateLike {
  private constructor(private readonly members: readonly (readonly [string, string])[]) {}

  static parse(text: string): W3CTraceState {
    const members: [string, string][] = [];
    for (const part of text.split(",")) {
      const match = MEMBER.exec(part.trim());
      if (match && !members.some(([key]) => key === match[1])) members.push([match[1]!, match[2]!]);
      if (members.length === MAX_MEMBERS) break;
    }
    return new W3CTraceState(members);
  }

  set(key: string, value: string): TraceStateLike {
    return new W3CTraceState([[key, value] as const, ...this.members.filter(([k]) => k !== key)].slice(0, MAX_MEMBERS));
  }

  unset(key: string): TraceStateLike {
    return new W3CTraceState(this.members.filter(([k]) => k !== key));
  }

  get(key: string): string | undefined {
    return this.members.find(([k]) => k === key)?.[1];
  }

  serialize(): string {
    return this.members.map(([key, value]) => `${key}=${value}`).join(",");
  }
}
