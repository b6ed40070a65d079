import { describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import { webhookSender } from "../../src/delivery/webhooks.js";
import type { Notification } from "../../src/notify/notification.js";
import { webhookSink } from "../../src/notify/sinks.js";
import { sqliteFileCase } from "../support/stores.js";
import { MINUTE, SECOND, T0, engineFor } from "../support/queue-fixtures.js";
import { httpReceiver } from "./receiver.js";

const SECRET = `whsec_${Buffer.alloc(24, 3).toString("base64")}`;

describe("notifications beyond jobs (SQLite file)", () => {
  const storeCase = sqliteFileCase();
  const engine = engineFor(storeCase);
  const receiver = httpReceiver();
  const notified = () => receiver.at("/ops").map((r) => r.json as Notification);

  it("notifies when a task's breaker opens", async () => {
    const { tw, clock } = await engine();
    tw.notify({ sinks: [webhookSink({ url: receiver.url("/ops"), secret: SECRET })] });
    tw.task("sweep", {
      every: "5m",
      breaker: { after: 2 },
      run: () => {
        throw new Error("upstream 502");
      },
    });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect(notified()).toEqual([]);
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(notified()).toEqual([
      {
        event: "task.breaker_opened",
        level: "critical",
        time: T0 + 10 * MINUTE,
        text: 'Task "sweep" failed 2 times in a row and its breaker opened: paused until tw.scheduler.resume("sweep").',
        fields: { task: "sweep", consecutiveFailures: 2, action: 'paused until tw.scheduler.resume("sweep")' },
      },
    ]);
  });

  it("notifies when a delivery drops an item after its last retry, in the tick after the one that dropped it", async () => {
    const { tw, clock } = await engine();
    tw.notify({ sinks: [webhookSink({ url: receiver.url("/ops"), secret: SECRET })] });
    receiver.answer("/callbacks", 502, 502);
    const callbacks = tw.delivery("callbacks", { send: webhookSender({ url: receiver.url("/callbacks"), secret: SECRET }), retry: schedule(["1m"]) });
    await callbacks.emit([{ key: "daily:a-1", payload: { account: "a-1" } }]);
    await tw.tick();
    expect(notified()).toEqual([]);

    await clock.set(T0 + MINUTE);
    // The item is dropped in this tick's sends; its notification is written after them, so the engine comes back at once.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + MINUTE);
    const [dropped] = await callbacks.dropped();
    expect(notified()).toEqual([]);
    await tw.tick();
    expect(notified()).toEqual([
      expect.objectContaining({
        event: "delivery.dropped",
        level: "error",
        text: `Delivery "callbacks" dropped item ${dropped!.id} (key daily:a-1) after 2 attempts, the retry schedule ran out: WebhookResponseError: webhook receiver ${receiver.url("/callbacks")} answered 502. It is in the dead-letter table; replay it with replay({ id }).`,
        fields: expect.objectContaining({ delivery: "callbacks", id: dropped!.id, key: "daily:a-1", attempts: 2 }),
      }),
    ]);
  });

  it("notifies once when a fan-out is stuck: as many failed rounds in a row as fanoutStuckAfter", async () => {
    const { tw, clock } = await engine();
    tw.notify({ sinks: [webhookSink({ url: receiver.url("/ops"), secret: SECRET })], fanoutStuckAfter: 3 });
    receiver.answer("/alerts/eu-2", 503, 503, 503, 503);
    const symbols = tw.fanout<string[]>("symbols", {
      groups: { alerts: { targets: ["eu-1", "eu-2"] } },
      send: async (target, payload, ctx) => {
        const response = await fetch(receiver.url(`/alerts/${String(target)}`), { method: "POST", body: JSON.stringify(payload), signal: ctx.signal });
        if (!response.ok) throw new Error(`${String(target)} answered ${response.status}`);
      },
    });
    await symbols.push(["BTC", "ETH"]);
    // Rounds fail at 00:00, 00:30 and 01:30 (the default backoff's 30s, then 1m): the third is the stuck one.
    await tw.tick();
    await clock.set(T0 + 30 * SECOND);
    await tw.tick();
    expect(notified()).toEqual([]);
    await clock.set(T0 + 90 * SECOND);
    // Logged by the pass: written after it, sent by the tick it asks for at once.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 90 * SECOND);
    await tw.tick();
    expect(notified()).toEqual([
      expect.objectContaining({
        event: "fanout.retry_scheduled",
        level: "warn",
        text: `Fan-out "symbols" is stuck: 3 rounds in a row failed to bring every target to version 1. 1 of 1 push failed; first: eu-2: Error: eu-2 answered 503. Next retry at ${new Date(T0 + 90 * SECOND + 2 * MINUTE).toISOString()}.`,
        fields: expect.objectContaining({ fanout: "symbols", consecutiveFailures: 3 }),
      }),
    ]);
    // The fourth failure in a row is the same spell: no second notification.
    await clock.set(T0 + 210 * SECOND);
    await tw.tick();
    await tw.tick();
    expect(receiver.at("/alerts/eu-2")).toHaveLength(4);
    expect(notified()).toHaveLength(1);
  });
});
