import { describe, expect, it } from "vitest";
import { webhookSink, slackSink } from "../../src/notify/sinks.js";
import type { Notification } from "../../src/notify/notification.js";
import { sqliteFileCase } from "../support/stores.js";
import { MINUTE, SECOND, T0, engineFor } from "../support/queue-fixtures.js";
import { eventually, realEngines } from "../support/real-time.js";
import { httpReceiver } from "./receiver.js";

const SECRET = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;

describe("the rate limit of a sink (SQLite file)", () => {
  const storeCase = sqliteFileCase();
  const engine = engineFor(storeCase);
  const receiver = httpReceiver();

  it("lets 10 of 30 dead jobs in a minute through, then one summary 'and 20 more' when the window has room, and no more than 10 inside it", async () => {
    const { tw, clock } = await engine();
    const notifier = tw.notify({ sinks: [webhookSink({ url: receiver.url("/hook"), secret: SECRET })], rateLimit: { max: 10, per: "1m" } });
    const q = tw.queue("imports", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        throw new Error(`row ${String((job.payload as { n: number }).n)} is malformed`);
      },
    });
    const posted = () => receiver.at("/hook").map((r) => r.json as Notification);
    const deadJobs = async (from: number) => {
      await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: { n: from + i } })));
      return tw.tick();
    };

    // 10 at 00:00, 10 at 00:20, 10 at 00:40: the first 10 go out, the other 20 are counted.
    expect((await deadJobs(0)).ran).toBe(10);
    expect(posted()).toHaveLength(10);
    expect(posted().every((n) => n.event === "job.failed" && n.held === undefined)).toBe(true);
    await clock.set(T0 + 20 * SECOND);
    await deadJobs(10);
    await clock.set(T0 + 40 * SECOND);
    const held = await deadJobs(20);
    expect(posted()).toHaveLength(10);
    expect(notifier.status().sinks[0]).toMatchObject({ sentInWindow: 10, held: [{ event: "job.failed", level: "error", count: 20, since: T0 + 20 * SECOND }] });
    // The engine says when the summary can go: when the first notification leaves the window.
    expect(held.nextWakeAt).toBe(T0 + MINUTE);

    await clock.set(T0 + MINUTE - 1);
    await tw.tick();
    expect(posted()).toHaveLength(10);

    await clock.set(T0 + MINUTE);
    await tw.tick();
    const summary = posted()[10]!;
    expect(posted()).toHaveLength(11);
    expect(summary).toMatchObject({
      event: "notify.held",
      level: "error",
      time: T0 + MINUTE,
      held: [{ event: "job.failed", level: "error", count: 20, since: T0 + 20 * SECOND }],
      fields: { rateLimit: { max: 10, per: MINUTE } },
    });
    expect(summary.text).toBe("…and 20 more job.failed since 2026-01-01T00:00:20.000Z (held back by the rate limit of 10 per 1m)");
    expect(notifier.status().sinks[0]).toMatchObject({ sentInWindow: 1, held: [] });
    // Counted once: no second summary.
    await clock.set(T0 + 3 * MINUTE);
    await tw.tick();
    expect(posted()).toHaveLength(11);

    // At 03:00 the window is empty again: of 11 more dead jobs, 10 go out and the 11th is counted.
    await deadJobs(30);
    await q.enqueue({ n: 40 });
    await tw.tick();
    expect(posted()).toHaveLength(21);
    expect(notifier.status().sinks[0]).toMatchObject({ sentInWindow: 10, held: [{ event: "job.failed", count: 1 }] });
    // However the posts fell, no minute-long window holds more than 10.
    const times = receiver.at("/hook").map((_, i) => posted()[i]!.time);
    for (const [i, at] of times.entries()) expect(times.filter((t) => t > at - MINUTE && t <= at).length, `window ending at post ${i}`).toBeLessThanOrEqual(10);
  });

  it("folds what it held into the next notification when an event arrives after the window has room", async () => {
    const { tw, clock } = await engine();
    tw.notify({ sinks: [slackSink({ url: receiver.url("/slack") })], rateLimit: { max: 1, per: "1m" }, events: ["delivery.dropped", "task.breaker_opened"] });
    const dropped = (id: string) => tw.logger.error("delivery.dropped", { delivery: "hooks", id, key: null, error: "answered 502", attempts: 6, reason: "the retry schedule ran out" });
    dropped("a");
    dropped("b");
    tw.logger.critical("task.breaker_opened", { task: "sweep", consecutiveFailures: 3, action: "paused" });
    await tw.tick();
    expect(receiver.at("/slack")).toHaveLength(1);

    // The window has room again and an event comes before any tick: it carries the summary.
    await clock.advance(MINUTE);
    dropped("c");
    await tw.tick();
    const texts = receiver.at("/slack").map((r) => (r.json as { text: string }).text);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toBe(
      ':x: *delivery.dropped*\nDelivery "hooks" dropped item c after 6 attempts, the retry schedule ran out: answered 502. It is in the dead-letter table; replay it with replay({ id }).\n' +
        "…and 1 more delivery.dropped since 2026-01-01T00:00:00.000Z, and 1 more task.breaker_opened since 2026-01-01T00:00:00.000Z (held back by the rate limit of 1 per 1m)",
    );
  });
});

describe("the rate limit on a started engine (system clock)", () => {
  const storeCase = sqliteFileCase();
  const engine = realEngines({ afterStop: () => storeCase.cleanup() });
  const receiver = httpReceiver();

  it("sends the summary on its own timer once the window has room, with no tick to bring it", async () => {
    const { tw } = await engine({ store: storeCase.make(), pollInterval: "1h", rescueInterval: "1h" });
    tw.notify({ sinks: [webhookSink({ url: receiver.url("/hook"), secret: SECRET })], rateLimit: { max: 2, per: "400ms" }, events: ["billing.mismatch"] });
    await tw.start();
    const firstAt = Date.now();
    for (let i = 0; i < 5; i++) tw.logger.warn("billing.mismatch", { account: `a-${i}` });
    await eventually(() => receiver.at("/hook").length >= 2, "the first two notifications");
    const summary = await eventually(() => receiver.at("/hook")[2], "the summary");
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(400);
    expect(summary.json).toMatchObject({ event: "notify.held", level: "warn", held: [{ event: "billing.mismatch", count: 3 }] });
    expect((summary.json as Notification).text).toMatch(/^…and 3 more billing\.mismatch since \S+ \(held back by the rate limit of 2 per 400 ms\)$/);
    // The first two events, each its own outbox item: the sender posts items side by side, so which
    // of the two arrives first is not fixed.
    expect(receiver.at("/hook").slice(0, 2).map((r) => (r.json as Notification).text).sort()).toEqual(["billing.mismatch: account=a-0", "billing.mismatch: account=a-1"]);
  });
});
