import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import { Logger, functionSink, jsonLines, pinoSink, toSink, type LogEvent, type LogLevel, type LogSink } from "../../src/core/logger.js";

const NOW = 1_700_000_000_000;
const LEVELS: LogLevel[] = ["debug", "info", "warn", "error", "critical"];

/** A real pino logger writing to a stream whose lines are kept, parsed. */
function capturedPino(level = "debug") {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  const logger = pino({ level }, stream);
  return { logger, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("jsonLines sink", () => {
  it("writes one JSON object per line: the event, its level, the clock's time and its fields", () => {
    const lines: string[] = [];
    const sink = jsonLines({ write: (line) => lines.push(line) });
    expect(sink.name).toBe("jsonLines(custom writer)");
    const logger = new Logger(sink, () => NOW, "debug");

    logger.info("job.enqueued", { queue: "emails", id: "1", note: "line\nbreak" });
    logger.critical("job.failed", { queue: "emails", id: "2", attempts: 5 });

    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain("\n");
    expect(JSON.parse(lines[0]!)).toEqual({ event: "job.enqueued", level: "info", time: NOW, queue: "emails", id: "1", note: "line\nbreak" });
    expect(JSON.parse(lines[1]!)).toEqual({ event: "job.failed", level: "critical", time: NOW, queue: "emails", id: "2", attempts: 5 });
  });

  it("is named for console when it writes to console.log", () => {
    expect(jsonLines().name).toBe("jsonLines(console)");
  });
});

describe("pino sink", () => {
  it("sends each event to a real pino logger at the mapped level, critical as fatal, with the event field and name as message", () => {
    const { logger: p, records } = capturedPino();
    const sink = toSink(p);
    expect(sink.name).toBe("pino");
    const logger = new Logger(sink, () => NOW, "debug");

    for (const level of LEVELS) logger.log(level, `test.${level}`, { queue: "emails", id: "7" });

    const got = records();
    expect(got.map((r) => r.level)).toEqual([p.levels.values.debug, p.levels.values.info, p.levels.values.warn, p.levels.values.error, p.levels.values.fatal]);
    expect(got.map((r) => r.level)).toEqual([20, 30, 40, 50, 60]);
    expect(got.map((r) => r.event)).toEqual(LEVELS.map((level) => `test.${level}`));
    expect(got.map((r) => r.msg)).toEqual(LEVELS.map((level) => `test.${level}`));
    for (const record of got) expect(record).toMatchObject({ queue: "emails", id: "7" });
  });

  it("leaves pino's own level filter in force", () => {
    const { logger: p, records } = capturedPino("warn");
    const logger = new Logger(pinoSink(p), () => NOW, "debug");
    logger.info("job.started");
    logger.warn("job.lease_lost");
    expect(records().map((r) => r.event)).toEqual(["job.lease_lost"]);
  });
});

describe("function sink", () => {
  it("passes each event object to the function", () => {
    const events: LogEvent[] = [];
    const sink = toSink((event) => events.push(event));
    expect(sink.name).toBe("function");
    const logger = new Logger(sink, () => NOW);
    logger.warn("job.lease_expired", { queue: "q", id: "3" });
    expect(events).toEqual([{ event: "job.lease_expired", level: "warn", time: NOW, queue: "q", id: "3" }]);
  });

  it("reads the time from the logger's clock at each event", () => {
    const events: LogEvent[] = [];
    let now = 10;
    const logger = new Logger(functionSink((event) => events.push(event)), () => now);
    logger.info("a");
    now = 20;
    logger.info("b");
    expect(events.map((e) => e.time)).toEqual([10, 20]);
  });
});

describe("levels", () => {
  function levelsWritten(min: LogLevel | undefined): LogLevel[] {
    const events: LogEvent[] = [];
    const logger = new Logger(functionSink((event) => events.push(event)), () => NOW, min);
    for (const level of LEVELS) logger[level](`test.${level}`);
    return events.map((e) => e.level);
  }

  it("drops events below the logger's level; info by default", () => {
    expect(levelsWritten("debug")).toEqual(LEVELS);
    expect(levelsWritten(undefined)).toEqual(["info", "warn", "error", "critical"]);
    expect(levelsWritten("warn")).toEqual(["warn", "error", "critical"]);
    expect(levelsWritten("critical")).toEqual(["critical"]);
  });

  it("answers enabled() to match", () => {
    const logger = new Logger(functionSink(() => {}), () => NOW, "error");
    expect(LEVELS.map((level) => logger.enabled(level))).toEqual([false, false, false, true, true]);
  });

  it("refuses an unknown level, naming it", () => {
    expect(() => new Logger(functionSink(() => {}), () => NOW, "verbose" as LogLevel)).toThrow(InvalidInputError);
    expect(() => new Logger(functionSink(() => {}), () => NOW, "verbose" as LogLevel)).toThrow(
      'log level must be one of debug, info, warn, error, critical, got "verbose"',
    );
  });
});

describe("a sink that throws", () => {
  it("does not throw out of log, is reported on console.error, and later events still reach it", () => {
    const reported: unknown[][] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      reported.push(args);
    });
    const delivered: string[] = [];
    const sink: LogSink = {
      name: "flaky",
      write(event) {
        if (event.event === "job.failed") throw new Error("disk full");
        delivered.push(event.event);
      },
    };
    const logger = new Logger(sink, () => NOW);

    expect(() => logger.error("job.failed", { id: "1" })).not.toThrow();
    logger.info("job.succeeded", { id: "2" });

    expect(delivered).toEqual(["job.succeeded"]);
    expect(reported).toHaveLength(1);
    expect(String(reported[0]![0])).toBe('tickwork: log sink "flaky" threw while writing job.failed:');
    expect((reported[0]![1] as Error).message).toBe("disk full");
  });
});

describe("toSink", () => {
  it("returns a sink as it is", () => {
    const sink = jsonLines({ write: () => {} });
    expect(toSink(sink)).toBe(sink);
  });

  it.each([
    [42, "42"],
    [null, "null"],
    [undefined, "undefined"],
    ["stdout", '"stdout"'],
    [{}, "{}"],
    [{ info: 1 }, '{"info":1}'],
  ])("refuses %j with an InvalidInputError that says what a logger can be", (value, shown) => {
    let caught: unknown;
    try {
      toSink(value as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidInputError);
    expect((caught as Error).message).toBe(
      `logger must be a function (event) => void, a pino instance or a sink such as jsonLines(), got ${shown}`,
    );
  });

  it("refuses an object with write but no name, rather than guess what to call it", () => {
    expect(() => toSink({ write: () => {} } as never)).toThrow(InvalidInputError);
  });
});
