import { errorText } from "../../core/errors.js";
import { jsonLines, type LogEvent, type LogLevel, type LogSink } from "../../core/logger.js";
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
 * call. A call the binding refuses is never thrown into the work that logged: its events, and every
 * later one, go to the console as JSON lines, after one line there saying why (under `wrangler dev` a
 * service whose worker does not run locally refuses every call). The sink's name says so from then on.
 */
export function workersLogs(binding: LogsBinding, options: { appId: string; context?: Record<string, unknown> }): FlushableSink {
  const shared = options.context ?? {};
  const name = `workersLogs(${options.appId})`;
  let buffer: { entry: LogsEntry; event: LogEvent }[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The console, once the binding refused a call. */
  let fallback: LogSink | null = null;

  const refused = (events: LogEvent[], error: unknown) => {
    if (!fallback) {
      fallback = jsonLines();
      console.warn(
        `tickwork: the logs binding of ${name} refused a call (${firstLine(errorText(error))}): its events go to the console from now on, as JSON lines. ` +
          "Under wrangler dev, a logging service whose worker is not running locally refuses every call.",
      );
    }
    for (const event of events) fallback.write(event);
  };

  const send = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    const call = binding
      .logBatch(
        options.appId,
        batch.map((b) => b.entry),
      )
      .catch((error: unknown) => refused(batch.map((b) => b.event), error))
      .finally(() => inFlight.delete(call));
    inFlight.add(call);
  };

  return {
    get name() {
      return fallback ? `jsonLines(console), after the binding of ${name} refused a call` : name;
    },
    write(event: LogEvent) {
      if (fallback) return fallback.write(event);
      const { event: message, level, ...fields } = event;
      buffer.push({ entry: { level: LEVELS[level], message, context: { ...shared, level, ...plain(fields) } }, event });
      if (buffer.length >= BATCH) send();
      else timer ??= setTimeout(send, LINGER_MS);
    },
    async flush() {
      send();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** One line of an error's text: the line that says why goes out as one line, the stack is not needed there. */
function firstLine(text: string): string {
  return text.split("\n", 1)[0]!;
}

/** Only what JSON keeps crosses the binding (an RPC call refuses functions and class instances). */
function plain(fields: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(fields, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))) as Record<string, unknown>;
}
