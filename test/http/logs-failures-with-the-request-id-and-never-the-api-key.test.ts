import { describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/http/client.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();
const KEY = "tk_live_9f8e7d6c5b4a39281706";

describe("failure logs", () => {
  it("each retried attempt logs http.retry and the end logs http.failed, with method, url, status, attempt and request id", async () => {
    server.current.script(
      "/flaky",
      { status: 502, headers: { "cf-ray": "ray-a" } },
      { status: 503, headers: { "x-request-id": "req-b" } },
      { status: 500, headers: { "x-amzn-requestid": "amz-c" } },
    );
    const { logger, named } = captureEvents();
    const http = createHttpClient({ baseUrl: server.current.url, logger, name: "hiro", retry: { maxAttempts: 3, backoff: () => 5 } });
    await expect(http.get("/flaky", { query: { limit: 5 } })).rejects.toMatchObject({ status: 500, requestId: "amz-c" });
    const url = `${server.current.url}/flaky?limit=5`;
    expect(named("http.retry")).toEqual([
      expect.objectContaining({ level: "warn", client: "hiro", method: "GET", url, status: 502, attempt: 1, maxAttempts: 3, requestId: "ray-a", delayMs: 5 }),
      expect.objectContaining({ level: "warn", client: "hiro", method: "GET", url, status: 503, attempt: 2, requestId: "req-b" }),
    ]);
    expect(named("http.failed")).toEqual([
      expect.objectContaining({ level: "error", client: "hiro", method: "GET", url, status: 500, attempt: 3, attempts: 3, requestId: "amz-c", code: "TW_HTTP_STATUS", error: expect.stringContaining("[request id amz-c]") }),
    ]);
  });
});

describe("the API key", () => {
  it("is sent as a header and never appears in logs, errors or the response's url", async () => {
    // The upstream even echoes the key back in its error body.
    server.current.script("/secret", { status: 503, body: `bad key ${KEY}?`, headers: { "cf-ray": "ray-k" } }, { status: 401, json: { error: `key ${KEY} revoked` } });
    const { logger, events } = captureEvents();
    const http = createHttpClient({ baseUrl: server.current.url, logger, apiKey: { header: "x-api-key", value: KEY }, retry: { maxAttempts: 3, backoff: () => 5 } });
    const error = await http.get("/secret").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, body: '{"error":"key [redacted] revoked"}' });
    expect(server.current.received("/secret").map((r) => r.headers["x-api-key"])).toEqual([KEY, KEY]);
    expect(events.map((e) => e.event)).toEqual(["http.retry", "http.failed"]);
    const everything = JSON.stringify(events) + JSON.stringify(error) + String(error) + (error as Error).stack;
    expect(everything).not.toContain(KEY);

    server.current.script("/secret-ok", { json: { ok: true } });
    const res = await http.get("/secret-ok");
    expect(JSON.stringify({ ...res, headers: [...res.headers] })).not.toContain(KEY);
  });

  it("sent as a query parameter, it is dropped from the logged url and the response's url", async () => {
    server.current.script("/q-secret", { status: 500 }, { json: { ok: true } });
    const { logger, events, named } = captureEvents();
    const http = createHttpClient({ baseUrl: server.current.url, logger, apiKey: { query: "api_key", value: KEY }, retry: { maxAttempts: 2, backoff: () => 5 } });
    const res = await http.get("/q-secret", { query: { token: "STX", ids: [1, 2] } });
    expect(server.current.received("/q-secret")[0]!.url).toBe(`/q-secret?token=STX&ids=1&ids=2&api_key=${KEY}`);
    const safe = `${server.current.url}/q-secret?token=STX&ids=1&ids=2`;
    expect(res.url).toBe(safe);
    expect(named("http.retry")[0]).toMatchObject({ url: safe });
    expect(JSON.stringify(events)).not.toContain(KEY);
  });
});
