import { createServer, connect, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createTickwork } from "../../src/core/engine.js";
import { StoreUnavailableError } from "../../src/core/errors.js";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { realEngines } from "../support/real-time.js";

/** A TCP proxy to the test database that the test can take down (the server "goes away") and bring back. */
class DatabaseProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  private readonly target = new URL(DATABASE_URL);

  /** The test database's URL, through the proxy. */
  get url(): string {
    const url = new URL(DATABASE_URL);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(a);
        a.on("error", () => b.destroy());
        a.on("close", () => (this.sockets.delete(a), b.destroy()));
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === "object") this.port = address.port;
  }

  /** Refuses new connections and cuts the open ones, as a database that went down would. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

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
