import { afterEach, describe, expect, it, vi } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import { Logger, functionSink, type LogEvent } from "../../src/core/logger.js";

const NOW = 1_700_000_000_000;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("Logger.observe", () => {
  it("an observer sees every event, debug included, while the sink keeps its level", () => {
    const written: LogEvent[] = [];
    const observed: LogEvent[] = [];
    const logger = new Logger(functionSink((e) => written.push(e)), () => NOW, "warn");
    logger.observe((e) => observed.push(e));

    logger.debug("job.succeeded", { queue: "mail", durationMs: 3 });
    logger.info("job.retried", { queue: "mail" });
    logger.error("job.failed", { queue: "mail" });
    logger.announce("engine.started", { logSink: "function" });

    expect(written.map((e) => e.event)).toEqual(["job.failed", "engine.started"]);
    expect(observed).toEqual([
      { event: "job.succeeded", level: "debug", time: NOW, queue: "mail", durationMs: 3 },
      { event: "job.retried", level: "info", time: NOW, queue: "mail" },
      { event: "job.failed", level: "error", time: NOW, queue: "mail" },
      { event: "engine.started", level: "info", time: NOW, logSink: "function" },
    ]);
  });

  it("enabled() is true for every level while an observer listens, so callers build the event", () => {
    const logger = new Logger(functionSink(() => {}), () => NOW, "error");
    expect(logger.enabled("debug")).toBe(false);
    const stop = logger.observe(() => {});
    expect(logger.enabled("debug")).toBe(true);
    stop();
    expect(logger.enabled("debug")).toBe(false);
    expect(logger.enabled("critical")).toBe(true);
  });

  it("a removed observer sees nothing more; one that throws breaks neither the sink nor the others", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const written: string[] = [];
    const seen: string[] = [];
    const logger = new Logger(functionSink((e) => written.push(e.event)), () => NOW, "info");
    logger.observe(() => {
      throw new Error("observer bug");
    });
    const stop = logger.observe((e) => seen.push(e.event));

    logger.info("a");
    stop();
    logger.info("b");

    expect(written).toEqual(["a", "b"]);
    expect(seen).toEqual(["a"]);
    expect(error).toHaveBeenCalledWith("tickwork: a log observer threw on a:", expect.any(Error));
  });

  it("refuses an observer that is not a function", () => {
    const logger = new Logger(functionSink(() => {}), () => NOW);
    expect(() => logger.observe("nope" as unknown as () => void)).toThrow(InvalidInputError);
  });
});
