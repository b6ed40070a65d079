import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import type { Tickwork } from "../../src/tickwork.js";
import { idempotencyKey } from "../../src/hono.js";
import { deferred, engineFor, type Deferred } from "../support/queue-fixtures.js";
import { allStoreCases } from "../support/stores.js";

/**
 * The `Idempotency-Key` middleware (IETF draft "The Idempotency-Key HTTP Header Field") in a real
 * Hono app served by @hono/node-server on 127.0.0.1, called with real `fetch`.
 */

interface Api {
  url: string;
  /** How many times each route's handler ran. */
  calls: Record<string, number>;
  /** When set, POST /api/orders waits for it (after telling `entered`). */
  hold?: { entered: Deferred; gate: Deferred };
}

/**
 * `/api/*` requires a key (scope: the `x-account` header); `/open/*` takes one if it is sent.
 * POST /api/orders answers 201 with a Location, a kept trace header and one that is not kept.
 */
function createApp(tw: Tickwork, api: Api): Hono {
  const app = new Hono();
  const count = (route: string) => (api.calls[route] = (api.calls[route] ?? 0) + 1);
  app.use("/api/*", idempotencyKey({ idempotency: tw.idempotency, required: true, scope: (c) => c.req.header("x-account") ?? "acct-1", replayHeaders: ["X-Order-Trace"] }));
  app.use("/open/*", idempotencyKey({ idempotency: tw.idempotency }));

  app.post("/api/orders", async (c) => {
    const n = count("orders");
    const body = (await c.req.json()) as Record<string, unknown>;
    if (api.hold) {
      api.hold.entered.resolve();
      await api.hold.gate.promise;
    }
    c.header("location", `/api/orders/o-${n}`);
    c.header("x-order-trace", `trace-${n}`);
    c.header("x-served-by", `handler-${n}`);
    return c.json({ orderId: `o-${n}`, ...body }, 201);
  });
  app.get("/api/orders/:id", (c) => {
    count("get");
    return c.json({ orderId: c.req.param("id") });
  });
  app.post("/api/limit-orders", async (c) => {
    count("limit");
    return c.json({ error: "insufficient_funds", attempt: api.calls.limit }, 400);
  });
  app.post("/api/flaky", (c) => {
    const n = count("flaky");
    return n === 1 ? c.json({ error: "upstream_down" }, 503) : c.json({ done: n }, 201);
  });
  app.post("/api/throws", (c) => {
    const n = count("throws");
    if (n === 1) throw new Error("database connection reset");
    return c.json({ done: n }, 201);
  });
  app.delete("/api/orders/:id", (c) => {
    count("delete");
    return c.body(null, 204);
  });
  app.post("/open/orders", async (c) => {
    const n = count("open");
    return c.json({ orderId: `p-${n}` }, 201);
  });
  // A thrown error becomes a 500, as an app's error handler would answer it.
  app.onError((error, c) => c.json({ error: "internal_error", message: error.message }, 500));
  return app;
}

async function listen(app: Hono): Promise<{ url: string; close(): Promise<void> }> {
  let server!: ReturnType<typeof serve>;
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1", overrideGlobalObjects: false }, (info: AddressInfo) => resolve(info.port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

async function expectProblem(res: Response, status: number, type: string): Promise<Problem> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = (await res.json()) as Problem;
  expect(body).toEqual({ type: `urn:tickwork:problem:${type}`, title: expect.any(String), status, detail: expect.stringContaining("Idempotency-Key") });
  return body;
}

describe.each(allStoreCases())("the Idempotency-Key middleware ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function start() {
    const { tw } = await engine();
    const api: Api = { url: "", calls: {} };
    const server = await listen(createApp(tw, api));
    close = server.close;
    api.url = server.url;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    return { tw, api, post };
  }

  it("replays a completed request's status, location, content-type and body with Idempotent-Replayed: true", async () => {
    const { api, post } = await start();
    const order = { symbol: "STX", side: "buy", size: 2 };

    const first = await post("/api/orders", order, { "idempotency-key": "k-1" });
    expect(first.status).toBe(201);
    expect(first.headers.get("location")).toBe("/api/orders/o-1");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.text();
    expect(JSON.parse(firstBody)).toEqual({ orderId: "o-1", ...order });

    const replay = await post("/api/orders", order, { "idempotency-key": "k-1" });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("location")).toBe("/api/orders/o-1");
    expect(replay.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(replay.headers.get("content-type")).toMatch(/^application\/json/);
    // A header named in replayHeaders is kept; others are not.
    expect(replay.headers.get("x-order-trace")).toBe("trace-1");
    expect(replay.headers.get("x-served-by")).toBeNull();
    expect(await replay.text()).toBe(firstBody);
    expect(api.calls.orders).toBe(1);

    // Keys are scoped: the same key from another account is another request.
    const other = await post("/api/orders", order, { "idempotency-key": "k-1", "x-account": "acct-2" });
    expect(other.status).toBe(201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(api.calls.orders).toBe(2);
  });

  it("replays a 204 No Content (a DELETE) as 204 with no body", async () => {
    const { api } = await start();
    const remove = () => fetch(`${api.url}/api/orders/o-1`, { method: "DELETE", headers: { "idempotency-key": "k-del" } });
    const first = await remove();
    expect(first.status).toBe(204);
    const replay = await remove();
    expect(replay.status).toBe(204);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe("");
    expect(api.calls.delete).toBe(1);
  });

  it("a 4xx answer is a result too: it is stored and replayed", async () => {
    const { api, post } = await start();
    const first = await post("/api/limit-orders", { price: 1 }, { "idempotency-key": "k-limit" });
    expect(first.status).toBe(400);
    const again = await post("/api/limit-orders", { price: 1 }, { "idempotency-key": "k-limit" });
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual({ error: "insufficient_funds", attempt: 1 });
    expect(api.calls.limit).toBe(1);
  });

  it("answers 409 with Retry-After while the first request with the key is still in flight", async () => {
    const { api, post } = await start();
    api.hold = { entered: deferred(), gate: deferred() };
    const order = { symbol: "STX", side: "buy", size: 2 };

    // Both sent at once; one claims the key and waits in the handler, the other is refused.
    const both = [post("/api/orders", order, { "idempotency-key": "k-race" }), post("/api/orders", order, { "idempotency-key": "k-race" })];
    const refused = await Promise.race(both);
    await api.hold.entered.promise;
    expect(refused.headers.get("retry-after")).toBe("1");
    await expectProblem(refused, 409, "idempotency-key-in-flight");

    api.hold.gate.resolve();
    const statuses = (await Promise.all(both)).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    expect(api.calls.orders).toBe(1);

    // Once the first has completed, the retry gets its response.
    const retry = await post("/api/orders", order, { "idempotency-key": "k-race" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(api.calls.orders).toBe(1);
  });

  it("answers 422 for a key reused with another body, and does not run the handler", async () => {
    const { api, post } = await start();
    expect((await post("/api/orders", { symbol: "STX", size: 2 }, { "idempotency-key": "k-2" })).status).toBe(201);
    await expectProblem(await post("/api/orders", { symbol: "STX", size: 20 }, { "idempotency-key": "k-2" }), 422, "idempotency-key-reused");
    expect(api.calls.orders).toBe(1);
    // The original request still replays.
    const replay = await post("/api/orders", { symbol: "STX", size: 2 }, { "idempotency-key": "k-2" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("answers 400 without a key where one is required, and passes requests without a key through where it is not", async () => {
    const { tw, api, post } = await start();
    await expectProblem(await post("/api/orders", { symbol: "STX" }), 400, "idempotency-key-missing");
    expect(api.calls.orders).toBeUndefined();

    for (let i = 1; i <= 2; i++) {
      const res = await post("/open/orders", {});
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ orderId: `p-${i}` });
    }
    expect(api.calls.open).toBe(2);
    expect(await tw.idempotency.list("anonymous")).toEqual([]);

    // With a key, the optional endpoint deduplicates too (scope "anonymous" by default).
    for (let i = 0; i < 2; i++) expect(await (await post("/open/orders", {}, { "idempotency-key": "k-open" })).json()).toEqual({ orderId: "p-3" });
    expect(api.calls.open).toBe(3);
    expect(await tw.idempotency.list("anonymous")).toMatchObject([{ key: "k-open", operation: "POST /open/orders", status: "completed" }]);
  });

  it("answers 400 for a key over 255 characters (255 is accepted)", async () => {
    const { api, post } = await start();
    await expectProblem(await post("/api/orders", { symbol: "STX" }, { "idempotency-key": "k".repeat(256) }), 400, "idempotency-key-invalid");
    expect(api.calls.orders).toBeUndefined();
    const longest = "k".repeat(255);
    expect((await post("/api/orders", { symbol: "STX" }, { "idempotency-key": longest })).status).toBe(201);
    expect((await post("/api/orders", { symbol: "STX" }, { "idempotency-key": longest })).headers.get("idempotent-replayed")).toBe("true");
    expect(api.calls.orders).toBe(1);
  });

  it("a 5xx from the handler, returned or thrown, is not stored: a retry with the same key runs again", async () => {
    const { tw, api, post } = await start();
    const failed = await post("/api/flaky", {}, { "idempotency-key": "k-flaky" });
    expect(failed.status).toBe(503);
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    const retried = await post("/api/flaky", {}, { "idempotency-key": "k-flaky" });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await retried.json()).toEqual({ done: 2 });
    expect(api.calls.flaky).toBe(2);
    expect((await post("/api/flaky", {}, { "idempotency-key": "k-flaky" })).headers.get("idempotent-replayed")).toBe("true");
    expect(api.calls.flaky).toBe(2);

    const threw = await post("/api/throws", {}, { "idempotency-key": "k-throws" });
    expect(threw.status).toBe(500);
    const again = await post("/api/throws", {}, { "idempotency-key": "k-throws" });
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual({ done: 2 });
    expect(api.calls.throws).toBe(2);
  });

  it("GET requests pass through untouched, with or without a key", async () => {
    const { tw, api } = await start();
    const variants: Record<string, string>[] = [{}, { "idempotency-key": "k-get" }, { "idempotency-key": "k-get" }, { "idempotency-key": "x".repeat(300) }];
    for (const headers of variants) {
      const res = await fetch(`${api.url}/api/orders/o-9`, { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      expect(await res.json()).toEqual({ orderId: "o-9" });
    }
    expect(api.calls.get).toBe(4);
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
  });
});
