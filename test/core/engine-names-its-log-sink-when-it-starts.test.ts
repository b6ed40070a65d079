import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { jsonLines, type LogEvent } from "../../src/core/logger.js";
import { sqlite } from "../../src/store/sqlite.js";

function started(events: ReadonlyArray<Record<string, unknown>>): Record<string, unknown> {
  const found = events.filter((e) => e.event === "engine.started");
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe("engine.started names the log sink", () => {
  it("a function given as logger: sink \"function\", chosen by the logger option", async () => {
    const events: LogEvent[] = [];
    const tw = await createTickwork({ store: sqlite(":memory:"), logger: (event) => events.push(event) });
    try {
      expect(started(events)).toMatchObject({
        level: "info",
        logSink: "function",
        logSinkChosenBy: "the logger option",
        store: expect.stringMatching(/^sqlite\(:memory:, (better-sqlite3|node:sqlite|bun:sqlite)\)$/),
        instanceId: tw.instanceId,
        logLevel: "info",
        clock: "system",
      });
      expect(tw.status().logSink).toBe("function");
    } finally {
      await tw.stop();
    }
  });

  it("no logger option: the default jsonLines(console), and it says it was the default", async () => {
    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      printed.push(String(line));
    });
    try {
      const tw = await createTickwork({ store: sqlite(":memory:") });
      await tw.stop();
      const events = printed.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(started(events)).toMatchObject({
        logSink: "jsonLines(console)",
        logSinkChosenBy: "default (no logger option given)",
      });
      expect(events.map((e) => e.event)).toEqual(["engine.started", "engine.stopped"]);
    } finally {
      spy.mockRestore();
    }
  });

  it("a pino instance given as logger: sink \"pino\", and the event arrives in pino's output", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        done();
      },
    });
    const tw = await createTickwork({ store: sqlite(":memory:"), logger: pino({ level: "debug" }, stream) });
    try {
      const event = started(lines.map((line) => JSON.parse(line) as Record<string, unknown>));
      expect(event).toMatchObject({ level: 30, msg: "engine.started", logSink: "pino", logSinkChosenBy: "the logger option" });
    } finally {
      await tw.stop();
    }
  });

  it("the statement is written even when the log level would hide info events", async () => {
    const events: LogEvent[] = [];
    const tw = await createTickwork({ store: sqlite(":memory:"), logLevel: "error", logger: (event) => events.push(event) });
    try {
      expect(started(events)).toMatchObject({ logSink: "function", logLevel: "error" });
    } finally {
      await tw.stop();
    }
    expect(events.map((e) => e.event)).toEqual(["engine.started"]);
  });

  it("pino receives one time field, its own", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        done();
      },
    });
    const tw = await createTickwork({ store: sqlite(":memory:"), logger: pino(stream) });
    await tw.stop();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.match(/"time":/g)).toHaveLength(1);
  });

  it("a jsonLines sink with a custom writer is named as such", async () => {
    const lines: string[] = [];
    const tw = await createTickwork({ store: sqlite(":memory:"), logger: jsonLines({ write: (line) => lines.push(line) }) });
    try {
      expect(started(lines.map((line) => JSON.parse(line) as Record<string, unknown>))).toMatchObject({
        logSink: "jsonLines(custom writer)",
        logSinkChosenBy: "the logger option",
      });
    } finally {
      await tw.stop();
    }
  });
});
