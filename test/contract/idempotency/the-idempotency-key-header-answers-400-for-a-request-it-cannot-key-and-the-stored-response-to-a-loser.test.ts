import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotencyKey, type IdempotencyVariables } from "../../../src/hono.js";
import type { Tickwork } from "../../../src/tickwork.js";
import { deferred, engineFor, type Deferred } from "../../support/queue-fixtures.js";
import { allStoreCases } from "../../support/stores.js";
import { eventually } from "../../support/real-time.js";
import { IdempotencyClaimLostError } from "../../../src/idempotency/errors.js";

/**
 * The `Idempotency-Key` middleware at its edges, in a real Hono app on 127.0.0.1 called with real
 * `fetch`: a request whose scope (here the `x-account` header) or operation (its path) the store
 * cannot hold is a 400 naming what is wrong, on every store alike, never a driver's 500; and a
 * request whose execution lost its claim answers with the key's stored response, not its own.
 */

interface Api {
  url: string;
  calls: number;
  hold?: { entered: Deferred; gate: Deferred };
  /** The signal each call's handler was given, in order. */
  signals: AbortSignal[];
}

function createApp(tw: Tickwork, api: Api): Hono<{ Variables: IdempotencyVariables }> {
  const app = new Hono<{ Variables: IdempotencyVariables }>();
  app.use("/api/*", idempotencyKey({ idempotency: tw.idempotency, required: true, scope: (c) => c.req.header("x-account") ?? "acct-1" }));
  app.use("/open/*", idempotencyKey({ idempotency: tw.idempotency }));
  app.post("/*", async (c) => {
    const n = ++api.calls;
    api.signals.push(c.get("idempotency").signal);
    if (api.hold) {
      api.hold.entered.resolve();
      await api.hold.gate.promise;
    }
    c.header("location", `/api/orders/o-${n}`);
    c.header("x-served-by", `handler-${n}`);
    return c.json({ orderId: `o-${n}` }, 201);
  });
  app.onError((error, c) => c.json({ error: "internal_error", message: error.message }, 500));
  return app;
}

async function listen(app: Hono<{ Variables: IdempotencyVariables }>): Promise<{ url: string; close(): Promise<void> }> {
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

describe.each(allStoreCases())("the Idempotency-Key middleware at its edges ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function start() {
    const e = await engine();
    const api: Api = { url: "", calls: 0, signals: [] };
    const server = await listen(createApp(e.tw, api));
    close = server.close;
    api.url = server.url;
    const post = (path: string, key: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": key, ...headers }, body: "{}" });
    return { ...e, api, post };
  }

  async function expectProblem(res: Response, status: number, type: string, says: string): Promise<void> {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual({ type: `urn:tickwork:problem:${type}`, title: expect.any(String), status, detail: expect.stringContaining(says) });
  }

  it("answers 400 naming the scope or the operation when the store could not hold them, runs nothing and writes nothing", async () => {
    const { tw, api, post } = await start();
    // A 3,000-character account header once reached PostgreSQL as the scope: "index row size ... exceeds", a 500.
    await expectProblem(await post("/api/orders", "k-1", { "x-account": "a".repeat(3_000) }), 400, "idempotency-request-invalid", "idempotency.run: scope must be a string of 1 to 255 characters");
    // The default operation is "METHOD /path".
    await expectProblem(await post(`/api/${"p".repeat(250)}`, "k-2"), 400, "idempotency-request-invalid", "idempotency.run: operation must be a string of 1 to 255 characters");
    expect(api.calls).toBe(0);
    expect(await tw.store.idempotency.findByKey({ key: "k-1", operation: "POST /api/orders" })).toBeNull();
    expect(await tw.store.idempotency.findByKey({ key: "k-2", operation: `POST /api/${"p".repeat(250)}` })).toBeNull();

    // Within the bounds, the same requests are keyed as usual.
    expect((await post("/api/orders", "k-1", { "x-account": "a".repeat(255) })).status).toBe(201);
    expect((await post("/api/orders", "k-1", { "x-account": "a".repeat(255) })).headers.get("idempotent-replayed")).toBe("true");
    expect(api.calls).toBe(1);
  });

  it("takes a key of any 255 header characters (Latin-1 bytes included) and answers 400 naming the header past that", async () => {
    const { api, post } = await start();
    const latin1 = "é\u00ff\u0080 k".repeat(51);
    expect(latin1.length).toBe(255);
    expect((await post("/api/orders", latin1)).status).toBe(201);
    expect((await post("/api/orders", latin1)).headers.get("idempotent-replayed")).toBe("true");
    await expectProblem(await post("/api/orders", `${latin1}é`), 400, "idempotency-key-invalid", "Idempotency-Key");
    expect(api.calls).toBe(1);
  });

  it("a request whose execution lost its claim answers with the key's stored response, not its handler's", async () => {
    const { tw, clock, api, post } = await start();
    api.hold = { entered: deferred(), gate: deferred() };
    const losing = post("/api/orders", "k-lost");
    await api.hold.entered.promise;

    // Another server took the key over (this one having stalled past staleAfter) and completed it.
    const ref = { scope: "acct-1", key: "k-lost", operation: "POST /api/orders" };
    const claimed = await tw.store.idempotency.find(ref);
    expect(await tw.store.idempotency.reclaim({ ...ref, expectedClaimId: claimed!.claimId, claimId: "other-server", fingerprint: claimed!.fingerprint, now: clock.now() })).toBe(true);
    const stored = { status: 201, headers: { "content-type": "application/json", location: "/api/orders/o-other" }, body: JSON.stringify({ orderId: "o-other" }) };
    expect(await tw.store.idempotency.complete({ ...ref, claimId: "other-server", result: JSON.stringify(stored), now: clock.now() })).toBe(true);

    api.hold.gate.resolve();
    const res = await losing;
    expect(res.status).toBe(201);
    expect(res.headers.get("idempotent-replayed")).toBe("true");
    expect(res.headers.get("location")).toBe("/api/orders/o-other");
    expect(res.headers.get("x-served-by")).toBeNull();
    expect(await res.json()).toEqual({ orderId: "o-other" });
    // Every later request with the key gets the same answer.
    const again = await post("/api/orders", "k-lost");
    expect([again.status, await again.json()]).toEqual([201, { orderId: "o-other" }]);
    expect(api.calls).toBe(1);
  });

  it(`hands the handler the claim's signal as c.get("idempotency").signal, aborted when a renewal finds the claim taken over`, async () => {
    const { tw, clock, api, post } = await start();
    api.hold = { entered: deferred(), gate: deferred() };
    const losing = post("/api/orders", "k-signal");
    await api.hold.entered.promise;
    const [signal] = api.signals;
    expect(signal!.aborted).toBe(false);
    const ref = { scope: "acct-1", key: "k-signal", operation: "POST /api/orders" };
    const claimed = await tw.store.idempotency.find(ref);
    expect(await tw.store.idempotency.reclaim({ ...ref, expectedClaimId: claimed!.claimId, claimId: "other-server", fingerprint: claimed!.fingerprint, now: clock.now() })).toBe(true);

    // The next renewal (a quarter of staleAfter on) finds the key taken over and aborts the signal
    // while the handler still runs.
    await clock.advance("10m");
    await eventually(() => signal!.aborted, "the handler's signal aborted");
    expect(signal!.reason).toBeInstanceOf(IdempotencyClaimLostError);
    api.hold.gate.resolve();
    expect((await losing).status).toBe(409);

    // A request without the header runs unkeyed, with a signal that never aborts.
    api.hold = undefined;
    const unkeyed = await fetch(`${api.url}/open/orders`, { method: "POST", body: "{}" });
    expect(unkeyed.status).toBe(201);
    expect(api.signals[1]!.aborted).toBe(false);
  });

  it("answers 409 with Retry-After when the execution that took the key over has not finished", async () => {
    const { tw, clock, api, post } = await start();
    api.hold = { entered: deferred(), gate: deferred() };
    const losing = post("/api/orders", "k-lost");
    await api.hold.entered.promise;
    const ref = { scope: "acct-1", key: "k-lost", operation: "POST /api/orders" };
    const claimed = await tw.store.idempotency.find(ref);
    expect(await tw.store.idempotency.reclaim({ ...ref, expectedClaimId: claimed!.claimId, claimId: "other-server", fingerprint: claimed!.fingerprint, now: clock.now() })).toBe(true);

    api.hold.gate.resolve();
    const res = await losing;
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("x-served-by")).toBeNull();
    await expectProblem(res, 409, "idempotency-key-in-flight", "Idempotency-Key");
  });
});
