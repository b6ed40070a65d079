import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import type { NotifyOptions } from "../../src/notify/options.js";
import { discordSink, slackSink, webhookSink } from "../../src/notify/sinks.js";
import { sqliteFileCase } from "../support/stores.js";
import { engineFor } from "../support/queue-fixtures.js";
import { httpReceiver } from "./receiver.js";

const SECRET = `whsec_${Buffer.alloc(24, 5).toString("base64")}`;
const SLACK_URL = "https://hooks.slack.com/services/T000/B000/secret-token-part";

describe("notify options (SQLite file)", () => {
  const storeCase = sqliteFileCase();
  const engine = engineFor(storeCase);
  const receiver = httpReceiver();

  it("refuses each bad option with an InvalidInputError naming the field, before anything is registered", async () => {
    const { tw } = await engine();
    const hook = receiver.url("/hook");
    const cases: [options: unknown, message: RegExp][] = [
      [undefined, /^notify: options must be \{ sinks, events\?, rateLimit\? \}/],
      [{ sinks: [] }, /^notify: sinks must be an array of 1 to 10 sinks/],
      [{ sinks: hook }, /^notify: sinks must be an array/],
      [{ sinks: [{ kind: "webhook", url: hook, secret: SECRET }], channel: "#ops" }, /^notify: unknown option "channel"/],
      [{ sinks: [hook] }, /^notify: sinks\[0\] must be a sink from webhookSink\(\), slackSink\(\) or discordSink\(\), got a string$/],
      [{ sinks: [{ url: hook }] }, /^notify: sinks\[0\]\.kind must be "webhook", "slack" or "discord"/],
      [{ sinks: [{ kind: "slack", url: "ftp://files.example.com/x" }] }, /^notify: sinks\[0\]\.url must be an http\(s\) URL, got a URL with the ftp: scheme$/],
      [{ sinks: [{ kind: "webhook", url: hook, secret: SECRET }, { kind: "discord", url: "not a url" }] }, /^notify: sinks\[1\]\.url must be an http\(s\) URL, got a string that is not a URL$/],
      [{ sinks: [{ kind: "slack", url: hook, secret: SECRET }] }, /^notify: sinks\[0\]: a slack sink takes name, url; unknown option "secret"/],
      [{ sinks: [{ kind: "webhook", url: hook }] }, /^notify: sinks\[0\]\.secret must be "whsec_" \+ base64 key bytes, got undefined$/],
      [{ sinks: [{ kind: "webhook", url: hook, secret: "sk_live_abc" }] }, /^notify: sinks\[0\]\.secret must be "whsec_" \+ base64 key bytes, got a string without the whsec_ prefix$/],
      [{ sinks: [{ kind: "webhook", url: hook, secret: `whsec_${Buffer.alloc(8).toString("base64")}` }] }, /^notify: sinks\[0\]\.secret: webhook secret must hold at least 16 bytes, got 8$/],
      [{ sinks: [{ kind: "slack", url: hook, name: "ops alerts!" }] }, /^notify: sinks\[0\]\.name must be 1 to 60 letters, digits or "_.:-"/],
      [{ sinks: [{ kind: "slack", url: hook, name: "ops" }, { kind: "discord", url: hook, name: "ops" }] }, /^notify: sinks\[1\]\.name "ops" is taken/],
      [{ sinks: [{ kind: "slack", url: hook }], events: [] }, /^notify: events must be an array of 1 to 100 event names/],
      [{ sinks: [{ kind: "slack", url: hook }], events: ["job.failed", "job failed"] }, /^notify: events\[1\] must be an event name such as "job.failed", got "job failed"$/],
      [{ sinks: [{ kind: "slack", url: hook }], rateLimit: { max: 0, per: "1m" } }, /^notify: rateLimit\.max must be an integer from 1 to 10000, got 0$/],
      [{ sinks: [{ kind: "slack", url: hook }], rateLimit: { max: 10, per: "soon" } }, /^notify: rateLimit\.per: invalid duration "soon"/],
      [{ sinks: [{ kind: "slack", url: hook }], rateLimit: { max: 10, per: "1m", burst: 2 } }, /^notify: rateLimit: unknown option "burst"/],
      [{ sinks: [{ kind: "slack", url: hook }], rateLimit: 10 }, /^notify: rateLimit must be \{ max, per \}/],
      [{ sinks: [{ kind: "slack", url: hook }], fanoutStuckAfter: 0 }, /^notify: fanoutStuckAfter must be an integer from 1 to 1000, got 0$/],
      [{ sinks: [{ kind: "slack", url: hook }], retry: ["1m"] }, /^notify: retry must be a backoff/],
      [{ sinks: [{ kind: "slack", url: hook }], timeout: 0 }, /^notify: timeout must be from 1 ms to 2147483647 ms, got 0$/],
    ];
    for (const [options, message] of cases) {
      let thrown: unknown;
      try {
        tw.notify(options as NotifyOptions);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(InvalidInputError);
      expect((thrown as Error).message, JSON.stringify(options)).toMatch(message);
    }
    // Nothing was registered by any of them: no outbox, and no observer turning events into notifications.
    expect([...tw.deliveries.keys()]).toEqual([]);
    tw.logger.error("job.failed", { queue: "q", id: "1", attempts: 1, maxAttempts: 1, error: "boom" });
    await tw.tick();
    expect(receiver.requests).toEqual([]);

    // A Slack URL is a credential: a refusal names what is wrong with it, never its path.
    expect(() => slackSink({ url: SLACK_URL.replace("https:", "gopher:") })).toThrow(/^slackSink: url must be an http\(s\) URL, got a URL with the gopher: scheme$/);
    expect(() => slackSink({ url: SLACK_URL.slice("https://".length) })).toThrow(/^slackSink: url must be an http\(s\) URL, got a string that is not a URL$/);
  });

  it("checks the sink factories' options where the sink is made, and refuses a notifier on a started engine", async () => {
    const { tw } = await engine();
    expect(() => webhookSink({ url: receiver.url("/hook"), secret: "whsec_!!!" })).toThrow(/^webhookSink: secret: webhook secret: not base64 \(after the whsec_ prefix, if any\)$/);
    expect(() => discordSink("https://discord.com/api/webhooks/1/x" as never)).toThrow(/^discordSink takes \{ url, name\? \}, got a string$/);
    expect(() => slackSink({ url: receiver.url("/slack"), channel: "#ops" } as never)).toThrow(/^slackSink: a slack sink takes name, url; unknown option "channel"$/);
    const first = tw.notify({ sinks: [slackSink({ url: receiver.url("/slack") }), slackSink({ url: receiver.url("/slack2") })] });
    // A second notifier numbers its outboxes past the first's; a name already held is refused.
    const second = tw.notify({ sinks: [slackSink({ url: receiver.url("/slack3") })], events: ["task.breaker_opened"] });
    expect([...first.deliveries, ...second.deliveries].map((d) => d.name)).toEqual(["notify:slack", "notify:slack:2", "notify:slack:3"]);
    expect(() => tw.notify({ sinks: [slackSink({ url: receiver.url("/slack"), name: "slack:2" })] })).toThrow(/^notify: sinks\[0\]\.name "slack:2" is taken/);
    await tw.start();
    expect(() => tw.notify({ sinks: [slackSink({ url: receiver.url("/slack") })] })).toThrow(/^notify: call tw\.notify\(\.\.\.\) before start\(\)/);
    expect([...tw.deliveries.keys()]).toEqual(["notify:slack", "notify:slack:2", "notify:slack:3"]);
  });
});
