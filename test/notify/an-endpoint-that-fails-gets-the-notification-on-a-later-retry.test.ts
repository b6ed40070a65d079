import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/delivery/webhooks.js";
import { slackSink, webhookSink } from "../../src/notify/sinks.js";
import { sqliteFileCase } from "../support/stores.js";
import { MINUTE, SECOND, T0, engineFor, until } from "../support/queue-fixtures.js";
import { httpReceiver } from "./receiver.js";

describe("a notification whose endpoint fails (SQLite file)", () => {
  const storeCase = sqliteFileCase();
  const engine = engineFor(storeCase);
  const receiver = httpReceiver();

  it("is retried on the delivery's backoff after two 500s and arrives on the third try, the same notification each time", async () => {
    const { tw, clock, named } = await engine();
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    // delivery.failed is watched for too: the outbox's own failed sends must still not notify.
    const [outbox] = tw.notify({ sinks: [webhookSink({ url: receiver.url("/hook"), secret })], events: ["job.failed", "delivery.failed"] }).deliveries;
    receiver.answer("/hook", 500, 500);
    const q = tw.queue("billing", {
      retry: { maxAttempts: 1 },
      handler: () => {
        throw new Error("card declined");
      },
    });
    const job = await q.enqueue({});

    // The job fails, the post answers 500: the notification waits for its retry, and the engine says when.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + MINUTE);
    expect(receiver.at("/hook")).toHaveLength(1);
    expect(await outbox!.outstanding()).toEqual([expect.objectContaining({ attempt: 2, lastError: expect.stringContaining("answered 500") })]);
    expect(named("delivery.failed")).toHaveLength(1);

    await clock.set(T0 + MINUTE);
    await tw.tick();
    expect(receiver.at("/hook")).toHaveLength(2);

    await clock.set(T0 + 6 * MINUTE);
    await tw.tick();
    const posts = receiver.at("/hook");
    expect(posts).toHaveLength(3);
    expect(await outbox!.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    // Nothing lost and nothing doubled: one notification, one id, the same body on every try.
    expect(new Set(posts.map((p) => p.headers["webhook-id"])).size).toBe(1);
    expect(new Set(posts.map((p) => p.body)).size).toBe(1);
    const verified = await verifyWebhook({ secret, headers: posts[2]!.headers, body: posts[2]!.body, now: clock.now() });
    expect(verified.payload).toMatchObject({ event: "job.failed", fields: { queue: "billing", id: job.id, error: expect.stringContaining("card declined") } });
    // Its own two failed sends were logged (delivery.failed) but not notified: a channel that is down cannot feed itself.
    expect(named("delivery.failed").map((e) => e["delivery"])).toEqual(["notify:webhook", "notify:webhook"]);
    expect(posts.every((p) => (p.json as { event: string }).event === "job.failed")).toBe(true);
  });

  it("is retried when the endpoint does not answer within the timeout, then after a 503", async () => {
    const { tw, clock } = await engine();
    const [outbox] = tw.notify({ sinks: [slackSink({ url: receiver.url("/slack") })], timeout: "5s" }).deliveries;
    receiver.answer("/slack", "hang", 503);
    tw.logger.critical("task.breaker_opened", { task: "sweep", consecutiveFailures: 3, action: 'paused until tw.scheduler.resume("sweep")' });

    const ticking = tw.tick();
    await until(() => receiver.at("/slack").length === 1, "the first post to arrive");
    // The post hangs; the send's timeout runs on the engine's clock.
    await clock.advance(5 * SECOND);
    await ticking;
    expect(await outbox!.outstanding()).toEqual([expect.objectContaining({ lastError: expect.stringContaining("no answer within 5000 ms") })]);

    // Then a 503: the stored error names the endpoint's origin only, since a Slack URL's path is its credential.
    await clock.advance(MINUTE);
    await tw.tick();
    const [retrying] = await outbox!.outstanding();
    expect(retrying!.lastError).toContain(`webhook receiver ${new URL(receiver.url("/")).origin}/… answered 503`);
    expect(retrying!.lastError).not.toContain("/slack");

    await clock.advance(5 * MINUTE);
    await tw.tick();
    const posts = receiver.at("/slack");
    expect(posts).toHaveLength(3);
    expect(posts[2]!.json).toEqual({ text: ':rotating_light: *task.breaker_opened*\nTask "sweep" failed 3 times in a row and its breaker opened: paused until tw.scheduler.resume("sweep").' });
    expect(await outbox!.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
  });
});
