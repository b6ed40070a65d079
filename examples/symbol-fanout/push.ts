import type { PushContext, PushSend } from "../../src/fanout/index.js";
import { VERSION_HEADER } from "./receiver.js";

/** A receiver as the fan-out knows it: an id unique across groups, and where it listens. */
export interface ReceiverTarget {
  id: string;
  url: string;
}

/** The fan-out's two groups (seed 001: 7 PriceCollectors, 70 PriceAlerts). */
export interface SymbolFanoutTargets {
  collectors: readonly ReceiverTarget[];
  alerts: readonly ReceiverTarget[];
}

/** How one push went, for whoever watches (the demo's round lines, the benchmark's timings). */
export interface PushOutcome {
  target: string;
  group: string;
  version: number;
  /** `ok`; `http`: the receiver answered an error status; `network`: no answer (refused, dropped); `timeout`: the fan-out gave up waiting. */
  result: "ok" | "http" | "network" | "timeout";
  status: number | null;
  error: string | null;
  /** Wall time of the push, in ms. */
  ms: number;
}

export class PushFailedError extends Error {
  constructor(
    readonly target: string,
    readonly status: number | null,
    detail: string,
  ) {
    super(`${target}: ${detail}`);
    this.name = "PushFailedError";
  }
}

/**
 * `send` for the fan-out: POSTs the group's projection to the receiver's `/symbols`, the version in
 * a header. Anything but a 2xx throws, so the fan-out records the target as behind and retries it.
 * The fan-out's `ctx.signal` aborts a push that outlives its timeout.
 */
export function pushOverHttp(onPush?: (outcome: PushOutcome) => void): PushSend<ReceiverTarget> {
  return async (target, payload, ctx) => {
    const started = performance.now();
    const report = (result: PushOutcome["result"], status: number | null, error: string | null) =>
      onPush?.({ target: target.id, group: ctx.group, version: ctx.version, result, status, error, ms: performance.now() - started });
    let status: number | null = null;
    try {
      const res = await fetch(`${target.url}/symbols`, {
        method: "POST",
        headers: { "content-type": "application/json", [VERSION_HEADER]: String(ctx.version) },
        body: JSON.stringify(payload),
        signal: ctx.signal,
      });
      status = res.status;
      const text = await res.text();
      if (!res.ok) throw new PushFailedError(target.id, status, `answered ${status}: ${text.slice(0, 200)}`);
      report("ok", status, null);
    } catch (error) {
      const failure = error instanceof PushFailedError ? error : new PushFailedError(target.id, status, describeFailure(error, ctx));
      report(failure.status !== null ? "http" : ctx.signal.aborted ? "timeout" : "network", failure.status, failure.message);
      throw failure;
    }
  };
}

/** fetch's own message is "fetch failed"; the cause says what happened (ECONNREFUSED, "other side closed"). */
function describeFailure(error: unknown, ctx: PushContext): string {
  if (ctx.signal.aborted) return `no answer: ${ctx.signal.reason instanceof Error ? ctx.signal.reason.message : "aborted"}`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return "connection refused (ECONNREFUSED): the receiver is down";
  if (cause) return `no answer: ${cause.message}${code ? ` (${code})` : ""}`;
  return error instanceof Error ? error.message : String(error);
}
