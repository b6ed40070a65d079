import { InvalidInputError, describe } from "./errors.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "critical";

/** One structured event. `event` is a stable name (`job.failed`, `task.backoff`...) that can be alerted on. */
export interface LogEvent {
  event: string;
  level: LogLevel;
  /** Epoch milliseconds, from the engine's clock. */
  time: number;
  [field: string]: unknown;
}

/** The smallest shape of a pino logger that tickwork writes to. */
export interface PinoLike {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  fatal(obj: object, msg?: string): void;
  levels: unknown;
}

/** A sink receives every event at or above the logger's level. */
export interface LogSink {
  /** Named in the `engine.started` event and in `status()`, so nobody has to guess where logs go. */
  readonly name: string;
  write(event: LogEvent): void;
}

/** What the `logger` option accepts. */
export type LoggerOption = LogSink | PinoLike | ((event: LogEvent) => void);

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, critical: 50 };

/** JSON lines, one event per line, written with `write` (default: `console.log`). */
export function jsonLines(options: { write?: (line: string) => void } = {}): LogSink {
  const write = options.write ?? ((line: string) => console.log(line));
  return {
    name: options.write ? "jsonLines(custom writer)" : "jsonLines(console)",
    write: (event) => write(JSON.stringify(event)),
  };
}

/** Events to a pino instance: level mapped, `critical` as `fatal`, the event name as the message. */
export function pinoSink(pino: PinoLike): LogSink {
  return {
    name: "pino",
    write(event) {
      // pino stamps its own time; passing ours too would write a duplicate "time" key.
      const { level, event: name, time: _time, ...fields } = event;
      const method = level === "critical" ? "fatal" : level;
      pino[method]({ event: name, ...fields }, name);
    },
  };
}

/** Events to a plain function. */
export function functionSink(fn: (event: LogEvent) => void): LogSink {
  return { name: "function", write: fn };
}

export function toSink(option: LoggerOption): LogSink {
  if (typeof option === "function") return functionSink(option);
  if (option && typeof option === "object") {
    if ("write" in option && typeof option.write === "function" && typeof (option as LogSink).name === "string") {
      return option as LogSink;
    }
    if (isPino(option)) return pinoSink(option);
  }
  throw new InvalidInputError(
    `logger must be a function (event) => void, a pino instance or a sink such as jsonLines(), got ${describe(option)}`,
  );
}

function isPino(value: object): value is PinoLike {
  const v = value as Partial<PinoLike>;
  return typeof v.info === "function" && typeof v.fatal === "function" && v.levels !== undefined;
}

/** Sees every event, whatever the logger's level: metrics and the admin dashboard count with it. */
export type LogObserver = (event: LogEvent) => void;

/**
 * The engine's logger: stamps time and level, filters by level, and never lets a sink break the work.
 * Observers see every event regardless of the level, beside the sink (which keeps its level): counting
 * `job.succeeded` for metrics must not mean writing it to the user's logs.
 */
export class Logger {
  readonly sink: LogSink;
  private readonly min: number;
  private readonly observers = new Set<LogObserver>();

  constructor(
    sink: LogSink,
    private readonly now: () => number,
    level: LogLevel = "info",
  ) {
    if (!(level in RANK)) throw new InvalidInputError(`log level must be one of ${Object.keys(RANK).join(", ")}, got ${describe(level)}`);
    this.sink = sink;
    this.min = RANK[level];
  }

  /** Whether an event of `level` goes anywhere (the sink, or an observer): callers skip building fields otherwise. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.min || this.observers.size > 0;
  }

  /** Adds an observer of every event; returns the function that removes it. */
  observe(observer: LogObserver): () => void {
    if (typeof observer !== "function") throw new InvalidInputError(`logger.observe: expected a function (event) => void, got ${describe(observer)}`);
    this.observers.add(observer);
    return () => void this.observers.delete(observer);
  }

  log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
    const toSink = RANK[level] >= this.min;
    if (!toSink && this.observers.size === 0) return;
    this.emit({ event, level, time: this.now(), ...fields }, toSink);
  }

  /** Written whatever the level: the engine's start-up statement of where its events go. */
  announce(event: string, fields: Record<string, unknown>): void {
    this.emit({ event, level: "info", time: this.now(), ...fields }, true);
  }

  private emit(record: LogEvent, toSink: boolean): void {
    if (toSink) {
      try {
        this.sink.write(record);
      } catch (error) {
        // A broken sink must not fail a job; say so where it can still be seen.
        console.error(`tickwork: log sink "${this.sink.name}" threw while writing ${record.event}:`, error);
      }
    }
    for (const observer of this.observers) {
      try {
        observer(record);
      } catch (error) {
        console.error(`tickwork: a log observer threw on ${record.event}:`, error);
      }
    }
  }

  debug(event: string, fields?: Record<string, unknown>): void {
    this.log("debug", event, fields);
  }
  info(event: string, fields?: Record<string, unknown>): void {
    this.log("info", event, fields);
  }
  warn(event: string, fields?: Record<string, unknown>): void {
    this.log("warn", event, fields);
  }
  error(event: string, fields?: Record<string, unknown>): void {
    this.log("error", event, fields);
  }
  critical(event: string, fields?: Record<string, unknown>): void {
    this.log("critical", event, fields);
  }
}
