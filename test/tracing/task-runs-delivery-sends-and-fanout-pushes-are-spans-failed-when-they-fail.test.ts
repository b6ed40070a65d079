import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { sqlite } from "../../src/store/sqlite.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { recordingTracer, type RecordingTracer } from "../support/tracing.js";

let tw: Tickwork | undefined;
afterEach(async () => {
  await tw?.stop();
  tw = undefined;
});

async function traced(): Promise<{ tw: Tickwork; rec: RecordingTracer }> {
  const rec = recordingTracer();
  tw = await createTickwork({ store: sqlite(":memory:"), clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {}, handleSignals: false, tracer: rec.tracer });
  return { tw, rec };
}

/** Each span by one attribute's value. */
function by(spans: ReadableSpan[], attribute: string): Map<unknown, ReadableSpan> {
  return new Map(spans.map((s) => [s.attributes[attribute], s]));
}

describe("task runs, delivery sends and fan-out pushes are spans, failed when they fail", () => {
  it("each run of a task is a span of its own trace with the task's name, slot and outcome; a failed run's span is failed", async () => {
    const { tw, rec } = await traced();
    let runs = 0;
    tw.task("prices", {
      every: "1m",
      immediately: true,
      run: () => {
        if (++runs === 1) throw new RangeError("upstream answered garbage");
        return { refreshed: 3 };
      },
    });
    await tw.tick();
    await tw.scheduler.runNow("prices");

    const [failed, manual] = rec.named("run prices");
    expect(rec.named("run prices")).toHaveLength(2);
    expect(failed!.kind).toBe(SpanKind.INTERNAL);
    expect(failed!.parentSpanContext).toBeUndefined();
    expect(failed!.attributes).toMatchObject({ "tickwork.task.name": "prices", "tickwork.task.manual": false, "tickwork.task.missed": 0, "tickwork.task.outcome": "failed", "error.type": "RangeError" });
    expect(typeof failed!.attributes["tickwork.task.scheduled_at"]).toBe("number");
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: "upstream answered garbage" });
    expect(manual!.attributes).toMatchObject({ "tickwork.task.manual": true, "tickwork.task.outcome": "succeeded" });
    expect(manual!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("each delivery send is a producer span with the item's id and attempt; a send that throws fails its span only", async () => {
    const { tw, rec } = await traced();
    const hooks = tw.delivery<{ account: string }>("hooks", {
      send: (message) => {
        if (message.payload.account === "down") throw new Error("receiver answered 503");
      },
    });
    await hooks.emit([{ key: "up", payload: { account: "up" } }, { key: "down", payload: { account: "down" } }]);
    await tw.tick();

    const sends = by(rec.named("deliver hooks"), "tickwork.delivery.key");
    expect(sends.size).toBe(2);
    const [up, down] = [sends.get("up")!, sends.get("down")!];
    for (const span of [up, down]) {
      expect(span.kind).toBe(SpanKind.PRODUCER);
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.attributes).toMatchObject({
        "messaging.system": "tickwork",
        "messaging.operation.type": "send",
        "messaging.operation.name": "deliver",
        "messaging.destination.name": "hooks",
        "tickwork.delivery.attempt": 1,
      });
      expect(span.attributes["messaging.message.id"]).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(up.status.code).toBe(SpanStatusCode.UNSET);
    expect(down.status).toEqual({ code: SpanStatusCode.ERROR, message: "receiver answered 503" });
    const outstanding = await hooks.outstanding();
    expect(outstanding.map((m) => m.id)).toEqual([down.attributes["messaging.message.id"]]);
  });

  it("each push of a fan-out is a producer span naming the target, its group and the version; a target that fails fails its span only", async () => {
    const { tw, rec } = await traced();
    const symbols = tw.fanout<string[]>("symbols", {
      groups: { collectors: { targets: ["c-1", "c-2"] }, alerts: { targets: ["a-1"], project: (s) => s.length } },
      send: (target) => {
        if (target === "c-2") throw new Error("connection refused");
      },
    });
    await symbols.push(["BTC", "ETH"]);
    await tw.tick();

    const pushes = by(rec.named("push symbols"), "tickwork.fanout.target");
    expect([...pushes.keys()].sort()).toEqual(["a-1", "c-1", "c-2"]);
    expect(pushes.get("a-1")!.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "send",
      "messaging.operation.name": "push",
      "messaging.destination.name": "symbols",
      "tickwork.fanout.target": "a-1",
      "tickwork.fanout.group": "alerts",
      "tickwork.fanout.version": 1,
      "tickwork.fanout.reconcile": false,
    });
    expect(pushes.get("c-1")!.kind).toBe(SpanKind.PRODUCER);
    expect(pushes.get("c-1")!.status.code).toBe(SpanStatusCode.UNSET);
    expect(pushes.get("c-2")!.status).toEqual({ code: SpanStatusCode.ERROR, message: "connection refused" });
  });
});
