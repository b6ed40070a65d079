import { describe, expect, it } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { StoreUnavailableError } from "../../src/core/errors.js";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";
import { DatabaseProxy } from "../support/database-proxy.js";

describe("PostgreSQL: a store that cannot be reached", () => {
  const schema = uniqueSchema();
  const proxy = new DatabaseProxy();
  let unreachable: Store | undefined;
  const engine = realEngines({
    afterStop: async () => {
      await proxy.close();
      await unreachable?.close();
      unreachable = undefined;
      await dropSchema(schema);
    },
  });

  it("makes createTickwork reject with StoreUnavailableError", async () => {
    const url = new URL(DATABASE_URL);
    url.hostname = "127.0.0.1";
    url.port = "1";
    unreachable = postgres({ url: url.toString(), schema });
    const created = createTickwork({ store: unreachable, logger: () => {}, handleSignals: false });
    await expect(created).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(created).rejects.toMatchObject({ code: "TW_STORE_UNAVAILABLE" });
  });

  it("makes tick() reject with StoreUnavailableError, while a failing job never escapes the tick", async () => {
    await proxy.open();
    const { tw } = await engine({ store: postgres({ url: proxy.url, schema }) });
    const ran: string[] = [];
    const payments = tw.queue<{ card: string }>("payments", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        ran.push(job.payload.card);
        if (job.payload.card === "declined") throw new Error("card declined");
      },
    });

    const declined = await payments.enqueue({ card: "declined" });
    expect(await tw.tick()).toMatchObject({ ran: 1 });
    expect(await tw.jobs.get(declined.id)).toMatchObject({ status: "failed", lastError: expect.stringContaining("card declined") });

    const waiting = await payments.enqueue({ card: "ok" });
    await proxy.close();
    const tick = tw.tick();
    await expect(tick).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(tick).rejects.toMatchObject({ code: "TW_STORE_UNAVAILABLE" });
    await expect(payments.enqueue({ card: "later" })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(ran).toEqual(["declined"]);

    // The database is back: the next tick (a runtime's retry) carries on where the failed one stopped.
    await proxy.open();
    expect(await tw.tick()).toMatchObject({ ran: 1 });
    expect(await tw.jobs.get(waiting.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(ran).toEqual(["declined", "ok"]);
  });
});
