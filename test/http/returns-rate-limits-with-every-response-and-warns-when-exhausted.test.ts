import { describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/http/client.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();

function client() {
  const log = captureEvents();
  const clock = fakeClock("2026-01-01T00:00:00Z");
  const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, name: "tenero" });
  return { http, clock, ...log };
}

describe("every response carries its rate-limit state", () => {
  it("a 200 with x-ratelimit-* headers", async () => {
    server.current.script("/quota", { json: { ok: true }, headers: { "x-ratelimit-limit": "60", "x-ratelimit-remaining": "59", "x-ratelimit-reset": "60" } });
    const { http, clock, named } = client();
    const res = await http.get("/quota");
    expect(res.rateLimit).toEqual({ limit: 60, remaining: 59, resetAt: clock.now() + 60_000, exhausted: false, source: "x-ratelimit" });
    expect(named("http.rate_limited")).toEqual([]);
  });

  it("Tenero's headers: a web-ui-ip limiter at 100 a minute and 50k a month", async () => {
    server.current.script("/tenero/tokens/stx", {
      json: { price_usd: 1.93 },
      headers: {
        server: "cloudflare",
        "cf-ray": "8f00aa11bb22cc33-IAD",
        "x-ratelimit-type": "web-ui-ip",
        "x-ratelimit-minute-limit": "100",
        "x-ratelimit-minute-remaining": "12",
        "x-ratelimit-month-limit": "50000",
        "x-ratelimit-month-remaining": "31337",
      },
    });
    const { http } = client();
    const res = await http.get("/tenero/tokens/stx");
    expect(res.requestId).toBe("8f00aa11bb22cc33-IAD");
    expect(res.rateLimit).toMatchObject({ type: "web-ui-ip", scope: "minute", limit: 100, remaining: 12, window: 60_000, exhausted: false });
    expect(res.rateLimit?.scopes).toEqual({
      minute: { limit: 100, remaining: 12, resetAt: null, window: 60_000 },
      month: { limit: 50000, remaining: 31337, resetAt: null },
    });
  });

  it("IETF RateLimit headers on a real response", async () => {
    server.current.script("/ietf", { json: [], headers: { RateLimit: '"default";r=4;t=20', "RateLimit-Policy": '"default";q=5;w=60' } });
    const { http, clock } = client();
    const res = await http.get("/ietf");
    expect(res.rateLimit).toMatchObject({ source: "ratelimit", policy: "default", limit: 5, remaining: 4, resetAt: clock.now() + 20_000, window: 60_000 });
  });

  it("null when the response has no rate-limit header", async () => {
    server.current.script("/plain", { json: 1 });
    const { http } = client();
    expect((await http.get("/plain")).rateLimit).toBeNull();
  });
});

describe("a spent budget on a successful response", () => {
  it("is returned as exhausted, with a warn event, and the call still succeeds", async () => {
    server.current.script("/last-call", {
      json: { price_usd: 2 },
      headers: { "cf-ray": "ray-last", "x-ratelimit-type": "web-ui-ip", "x-ratelimit-minute-limit": "100", "x-ratelimit-minute-remaining": "0", "x-ratelimit-minute-reset": "42" },
    });
    const { http, clock, named } = client();
    const res = await http.get("/last-call");
    expect(res).toMatchObject({ status: 200, data: { price_usd: 2 }, attempts: 1 });
    expect(res.rateLimit).toMatchObject({ exhausted: true, remaining: 0, resetAt: clock.now() + 42_000, scope: "minute" });
    expect(named("http.rate_limited")).toEqual([
      expect.objectContaining({
        level: "warn", client: "tenero", method: "GET", url: `${server.current.url}/last-call`, status: 200, requestId: "ray-last",
        limit: 100, remaining: 0, resetAt: clock.now() + 42_000, scope: "minute", type: "web-ui-ip",
      }),
    ]);
  });
});
