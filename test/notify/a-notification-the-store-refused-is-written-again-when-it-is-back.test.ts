import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { slackSink } from "../../src/notify/sinks.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { dropSchema, uniqueSchema } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";
import { DatabaseProxy } from "../support/database-proxy.js";
import { START, until } from "../support/queue-fixtures.js";
import { httpReceiver } from "./receiver.js";

describe("PostgreSQL: a notification whose outbox write the store refused", () => {
  const schema = uniqueSchema();
  const proxy = new DatabaseProxy();
  const engine = realEngines({
    afterStop: async () => {
      await proxy.close();
      await dropSchema(schema);
    },
  });
  const receiver = httpReceiver();

  it("waits in memory, is logged, and is written and sent once the database is back", async () => {
    await proxy.open();
    const clock = fakeClock(START);
    const { tw, named } = await engine({ store: postgres({ url: proxy.url, schema }), clock });
    const notifier = tw.notify({ sinks: [slackSink({ url: receiver.url("/slack") })] });

    await proxy.close();
    tw.logger.critical("task.breaker_opened", { task: "sweep", consecutiveFailures: 3, action: "paused" });
    await until(() => named("store.error").length > 0, "the failed write to be logged");
    expect(named("store.error")[0]).toMatchObject({ operation: "notify", delivery: "notify:slack", waiting: 1 });
    // A tick-driven engine is asked back when the write is due again.
    expect(notifier.nextAt()).toBe(clock.now() + 5_000);

    await proxy.open();
    await clock.advance("5s");
    await tw.tick();
    expect(receiver.at("/slack").map((r) => r.json)).toEqual([{ text: ':rotating_light: *task.breaker_opened*\nTask "sweep" failed 3 times in a row and its breaker opened: paused.' }]);
    expect(notifier.nextAt()).toBeNull();
    expect(await notifier.deliveries[0]!.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
  });
});
