import type { LogEvent, LogLevel, LogSink } from "../../core/logger.js";
import type { LogsBinding, LogsEntry, LogsLevel } from "./platform.js";

const LEVELS: Record<LogLevel, LogsLevel> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR", critical: "ERROR" };
/** Entries sent in one call at most; more are sent at once rather than held. */
const BATCH = 50;
/** Entries logged outside an invocation that flushes (a timer's) are sent after this long. */
const LINGER_MS = 1_000;

/** A sink that holds writes for a batched call: `flush()` sends them before the invocation ends. */
export interface FlushableSink extends LogSink {
  flush(): Promise<void>;
}

/**
 * Events to a Workers RPC logging binding (such as `env.LOGS`, the worker-logs service). Each event
 * is one entry `{ level, message, context }`: the event name as the message, its fields as the
 * context, with tickwork's own level kept there (the service has four; `critical` arrives as ERROR)
 * and `options.context` added (`TickworkObject` names the object, so one class's instances can be told apart).
 * Entries go out in `logBatch` calls of up to 50, because every call is a subrequest and a tick's
 * subrequests belong to its deliveries; `TickworkObject` flushes at the end of every alarm and RPC
 * call. A failed call is reported on the console, never thrown into the work that logged.
 */
export function workersLogs(binding: LogsBinding, options: { appId: string; context?: Record<string, unknown> }): FlushableSink {
  const shared = options.context ?? {};
  let buffer: LogsEntry[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const send = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return;
    const entries = buffer;
    buffer = [];
    const call = binding
      .logBatch(options.appId, entries)
      .catch((error: unknown) => console.error(`tickwork: the logs binding refused ${entries.length} ${entries.length === 1 ? "entry" : "entries"} (${entries.map((e) => e.message).join(", ")}):`, error))
      .finally(() => inFlight.delete(call));
    inFlight.add(call);
  };

  return {
    name: `workersLogs(${options.appId})`,
    write(event: LogEvent) {
      const { event: message, level, ...fields } = event;
      buffer.push({ level: LEVELS[level], message, context: { ...shared, level, ...plain(fields) } });
      if (buffer.length >= BATCH) send();
      else timer ??= setTimeout(send, LINGER_MS);
    },
    async flush() {
      send();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** Only what JSON keeps crosses the binding (an RPC call refuses functions and class instances). */
function plain(fields: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(fields, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))) as Record<string, unknown>;
}
