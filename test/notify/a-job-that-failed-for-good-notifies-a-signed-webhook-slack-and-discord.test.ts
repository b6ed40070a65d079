import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/delivery/webhooks.js";
import { discordSink, slackSink, webhookSink } from "../../src/notify/sinks.js";
import { sqliteFileCase } from "../support/stores.js";
import { SECOND, T0, engineFor } from "../support/queue-fixtures.js";
import { httpReceiver } from "./receiver.js";

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

describe("notifications of a job that failed for good (SQLite file)", () => {
  const storeCase = sqliteFileCase();
  const engine = engineFor(storeCase);
  const receiver = httpReceiver();

  it("posts one signed webhook naming the queue, job id and error, and Slack and Discord their own formats; a retried attempt notifies nothing", async () => {
    const { tw, clock } = await engine();
    const secret = newSecret();
    const notifier = tw.notify({ sinks: [webhookSink({ url: receiver.url("/hook"), secret }), slackSink({ url: receiver.url("/slack") }), discordSink({ url: receiver.url("/discord") })] });
    const q = tw.queue("emails", {
      retry: { maxAttempts: 2, backoff: () => SECOND },
      handler: () => {
        throw new Error("smtp answered 550 <no such user> & gave up");
      },
    });
    const job = await q.enqueue({ to: "ops@example.com" });

    // The first attempt fails and is retried: nothing to tell anyone yet.
    await tw.tick();
    expect(receiver.requests).toEqual([]);

    await clock.advance(SECOND);
    await tw.tick();
    expect(receiver.requests.map((r) => r.path).sort()).toEqual(["/discord", "/hook", "/slack"]);

    const [hook] = receiver.at("/hook");
    const verified = await verifyWebhook({ secret, headers: hook!.headers, body: hook!.body, now: clock.now() });
    const [outbox] = notifier.deliveries;
    expect(outbox!.name).toBe("notify:webhook");
    expect(verified.payload).toEqual({
      event: "job.failed",
      level: "error",
      time: T0 + SECOND,
      text: `Job ${job.id} in queue "emails" failed for good after 2 of 2 attempts: Error: smtp answered 550 <no such user> & gave up`,
      fields: { queue: "emails", id: job.id, attempt: 2, attempts: 2, maxAttempts: 2, error: expect.stringContaining("smtp answered 550") },
    });
    // The webhook-id is the outbox item's id: the same on every retry, so a receiver dedupes on it.
    expect(hook!.headers["webhook-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await outbox!.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });

    const [slack] = receiver.at("/slack");
    expect(slack!.headers["content-type"]).toBe("application/json");
    expect(slack!.headers["webhook-signature"]).toBeUndefined();
    // Slack's incoming-webhook body: text in mrkdwn, with <, > and & escaped so an error cannot link or mention.
    expect(slack!.json).toEqual({
      text: `:x: *job.failed*\nJob ${job.id} in queue "emails" failed for good after 2 of 2 attempts: Error: smtp answered 550 &lt;no such user&gt; &amp; gave up`,
    });

    const [discord] = receiver.at("/discord");
    expect(discord!.json).toEqual({
      content: `**job.failed** (error)\nJob ${job.id} in queue "emails" failed for good after 2 of 2 attempts: Error: smtp answered 550 <no such user> & gave up`,
      allowed_mentions: { parse: [] },
    });

    // One failure, one notification per sink, however often the engine ticks after it.
    await clock.advance("10m");
    await tw.tick();
    expect(receiver.requests).toHaveLength(3);
  });

  it("keeps a Discord post within 2,000 characters and escapes markdown; a job failed by a lapsed lease notifies too", async () => {
    const { tw, clock } = await engine();
    tw.notify({ sinks: [discordSink({ url: receiver.url("/discord") })] });
    const q = tw.queue("reports", {
      retry: { maxAttempts: 1 },
      handler: () => {
        throw new Error(`**@everyone** ${"x".repeat(5_000)}`);
      },
    });
    await q.enqueue({});
    await tw.tick();
    const [post] = receiver.at("/discord");
    const { content, allowed_mentions } = post!.json as { content: string; allowed_mentions: unknown };
    expect(content).toHaveLength(2_000);
    expect(content.endsWith("…")).toBe(true);
    expect(content).toContain("Error: \\*\\*@everyone\\*\\*");
    expect(allowed_mentions).toEqual({ parse: [] });

    // A job whose worker died on its last attempt fails for good when its lease lapses: the rescue logs job.failed.
    const stuck = await tw.queue("imports", { retry: { maxAttempts: 1 }, handler: () => {} }).enqueue({});
    await tw.store.queue.claimDue({ queue: "imports", limit: 1, now: clock.now(), leaseUntil: clock.now() + SECOND, workerId: "dead/imports" });
    await clock.advance(2 * SECOND);
    await tw.tick();
    expect(receiver.at("/discord")).toHaveLength(2);
    expect((receiver.at("/discord")[1]!.json as { content: string }).content).toContain(`Job ${stuck.id} in queue "imports" failed for good after 1 of 1 attempts: lease expired on the last attempt`);
  });
});
