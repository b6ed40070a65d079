import { describe, expect, it } from "vitest";
import { HttpError, HttpNetworkError, HttpTimeoutError } from "../../src/http/errors.js";
import { createHttpClient, type HttpClientOptions } from "../../src/http/client.js";
import { exponential } from "../../src/core/backoff.js";
import { captureEvents, closedPort, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();

/** Small real delays: these tests exercise real sockets, so waits are a few milliseconds, not a fake clock. */
function client(options: HttpClientOptions = {}) {
  const log = captureEvents();
  const http = createHttpClient({
    baseUrl: server.current.url,
    timeout: "200ms",
    retry: { maxAttempts: 3, backoff: exponential({ base: "5ms", factor: 2, max: "20ms", jitter: "full" }) },
    logger: log.logger,
    ...options,
  });
  return { http, ...log };
}

describe("retries what a second attempt can fix", () => {
  it("answers 503 twice, then 200: the third attempt's data comes back", async () => {
    server.current.script("/flaky", { status: 503, body: "busy" }, { status: 503, body: "busy" }, { json: { ok: true } });
    const { http, named } = client();
    const res = await http.get("/flaky");
    expect(res).toMatchObject({ status: 200, data: { ok: true }, attempts: 3 });
    expect(server.current.received("/flaky")).toHaveLength(3);
    expect(named("http.retry").map((e) => [e.status, e.attempt])).toEqual([[503, 1], [503, 2]]);
    expect(named("http.failed")).toEqual([]);
  });

  it("a request that hangs past the per-attempt timeout is abandoned and the second attempt succeeds", async () => {
    server.current.script("/slow-once", { hang: true }, { json: { fresh: 1 } });
    const { http, named } = client();
    const res = await http.get("/slow-once");
    expect(res).toMatchObject({ status: 200, data: { fresh: 1 }, attempts: 2 });
    expect(named("http.retry")).toEqual([expect.objectContaining({ code: "TW_HTTP_TIMEOUT", attempt: 1, error: expect.stringContaining("timed out after 200 ms") })]);
  });

  it("a connection cut in the middle of the body is a network error, and the retry succeeds", async () => {
    server.current.script("/cut-once", { cut: true, partial: '{"price": 1.2' }, { json: { price: 1.25 } });
    const { http, named } = client();
    const res = await http.get("/cut-once");
    expect(res).toMatchObject({ data: { price: 1.25 }, attempts: 2 });
    expect(named("http.retry")).toEqual([expect.objectContaining({ code: "TW_HTTP_NETWORK", attempt: 1 })]);
  });

  it("a connection dropped before any answer is a network error, and the retry succeeds", async () => {
    server.current.script("/drop-once", { drop: true }, { json: [1, 2, 3] });
    const { http, named } = client();
    const res = await http.get("/drop-once");
    expect(res).toMatchObject({ data: [1, 2, 3], attempts: 2 });
    expect(named("http.retry")[0]).toMatchObject({ code: "TW_HTTP_NETWORK" });
  });

  it("waits the backoff policy's delay for each failure count", async () => {
    server.current.script("/backoff", { status: 502 }, { status: 504 }, { json: "ok" });
    const asked: number[] = [];
    const { http, named } = client({ retry: { maxAttempts: 3, backoff: (failures) => (asked.push(failures), failures * 3) } });
    await http.get("/backoff");
    expect(asked).toEqual([1, 2]);
    expect(named("http.retry").map((e) => e.delayMs)).toEqual([3, 6]);
  });

  it("stops when the backoff policy says so, even with attempts left", async () => {
    server.current.script("/policy-stops", { status: 500 });
    const { http } = client({ retry: { maxAttempts: 5, backoff: () => null as unknown as number } });
    await expect(http.get("/policy-stops")).rejects.toBeInstanceOf(HttpError);
    expect(server.current.received("/policy-stops")).toHaveLength(1);
  });
});

describe("when every attempt fails", () => {
  it("a 5xx on every attempt ends in HttpError with the status, the body's start and the attempts", async () => {
    server.current.script("/down", { status: 500, body: "x".repeat(5_000), headers: { "x-request-id": "req-down" } });
    const { http, named } = client();
    const error = (await http.get("/down").catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: "TW_HTTP_STATUS", status: 500, attempts: 3, requestId: "req-down", method: "GET", url: `${server.current.url}/down` });
    expect(error.body).toHaveLength(1_000);
    expect(error.retryAfter).toBeUndefined();
    expect(named("http.failed")).toEqual([expect.objectContaining({ level: "error", status: 500, attempts: 3, requestId: "req-down", code: "TW_HTTP_STATUS" })]);
  });

  it("a timeout on the last attempt ends in HttpTimeoutError", async () => {
    server.current.script("/always-slow", { hang: true });
    const { http } = client({ retry: { maxAttempts: 2, backoff: () => 1 }, timeout: "50ms" });
    const error = await http.get("/always-slow").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpTimeoutError);
    expect(error).toMatchObject({ code: "TW_HTTP_TIMEOUT", attempts: 2, timeoutMs: 50 });
    expect(server.current.received("/always-slow")).toHaveLength(2);
  });

  it("a refused connection on every attempt ends in HttpNetworkError naming the cause", async () => {
    const port = await closedPort();
    const { http, named } = client({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await http.get("/anything").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpNetworkError);
    expect(error).toMatchObject({ code: "TW_HTTP_NETWORK", attempts: 3, requestId: null, message: expect.stringContaining("ECONNREFUSED") });
    expect(named("http.retry")).toHaveLength(2);
    expect(named("http.failed")).toEqual([expect.objectContaining({ code: "TW_HTTP_NETWORK", attempts: 3, status: null })]);
  });

  it("retry: false makes one attempt", async () => {
    server.current.script("/once", { status: 503 });
    const { http } = client();
    await expect(http.get("/once", { retry: false })).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(server.current.received("/once")).toHaveLength(1);
  });

  it("retryOn chooses the statuses worth another attempt", async () => {
    server.current.script("/custom", { status: 409 }, { json: "second" });
    const { http } = client({ retryOn: (status) => status === 409 });
    await expect(http.get("/custom")).resolves.toMatchObject({ data: "second", attempts: 2 });
    server.current.script("/not-listed", { status: 503 });
    const { http: strict } = client({ retryOn: [500] });
    await expect(strict.get("/not-listed")).rejects.toMatchObject({ status: 503, attempts: 1 });
  });
});
