import { describe, expect, it } from "vitest";
import { HttpError, RateLimitedError } from "../../src/http/errors.js";
import { createHttpClient, type HttpClientOptions } from "../../src/http/client.js";
import { retryAfterMs } from "../../src/core/retry-after.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();
const START = "2026-01-01T00:00:00Z";

/** The wait schedule runs on a fake clock: the test moves it and sees exactly when the retry goes. */
function client(options: HttpClientOptions = {}) {
  const log = captureEvents();
  const clock = fakeClock(START);
  const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, retry: { maxAttempts: 3, backoff: () => 5 }, ...options });
  return { http, clock, ...log };
}

/** An HTTP date `seconds` after a server time given with a matching Date header. */
function serverDates(seconds: number): Record<string, string> {
  const serverNow = Math.floor(Date.now() / 1000) * 1000;
  return { date: new Date(serverNow).toUTCString(), "retry-after": new Date(serverNow + seconds * 1000).toUTCString() };
}

describe("a 429 with Retry-After within maxRetryAfter", () => {
  it("in seconds: the client waits exactly that long on its clock, then retries and succeeds", async () => {
    server.current.script("/429-seconds", { status: 429, headers: { "retry-after": "7" } }, { json: { ok: 1 } });
    const { http, clock, named } = client();
    const pending = http.get("/429-seconds");
    await server.current.waitForRequests("/429-seconds", 1);
    await expect.poll(() => named("http.retry").length).toBe(1);
    expect(named("http.retry")[0]).toMatchObject({ status: 429, delayMs: 7_000, retryAfterMs: 7_000, level: "warn" });
    await clock.advance("6999ms");
    expect(clock.pending).toBe(1); // still waiting: the retry has not been sent
    expect(server.current.received("/429-seconds")).toHaveLength(1);
    await clock.advance("1ms");
    await expect(pending).resolves.toMatchObject({ status: 200, data: { ok: 1 }, attempts: 2 });
  });

  it("as an HTTP date: the wait is the date's distance from the server's Date, not from the client's clock", async () => {
    server.current.script("/429-date", () => ({ status: 429, headers: serverDates(12) }), { json: "done" });
    const { http, clock, named } = client();
    const pending = http.get("/429-date");
    await expect.poll(() => named("http.retry").length).toBe(1);
    expect(named("http.retry")[0]).toMatchObject({ delayMs: 12_000 });
    await clock.advance("12s");
    await expect(pending).resolves.toMatchObject({ data: "done", attempts: 2 });
  });
});

describe("RateLimitedError carries retryAfter, so the queue and the scheduler wait until then", () => {
  it("a Retry-After in seconds beyond maxRetryAfter gives up at once, with retryAfter at that time", async () => {
    server.current.script("/429-long", { status: 429, headers: { "retry-after": "120", "cf-ray": "ray-1" }, json: { error: "slow down" } });
    const { http, clock, named } = client();
    const error = (await http.get("/429-long").catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: "TW_HTTP_RATE_LIMITED", status: 429, attempts: 1, requestId: "ray-1", body: '{"error":"slow down"}' });
    expect(error.retryAfter).toEqual(new Date(clock.now() + 120_000));
    expect(retryAfterMs(error, clock.now())).toBe(120_000);
    expect(server.current.received("/429-long")).toHaveLength(1);
    expect(named("http.retry")).toEqual([]);
    expect(named("http.failed")).toEqual([
      expect.objectContaining({ code: "TW_HTTP_RATE_LIMITED", status: 429, requestId: "ray-1", retryAfter: clock.now() + 120_000, gaveUp: expect.stringContaining("more than maxRetryAfter") }),
    ]);
  });

  it("a Retry-After HTTP date beyond maxRetryAfter gives retryAfter at that date", async () => {
    server.current.script("/429-long-date", () => ({ status: 429, headers: serverDates(90) }));
    const { http, clock } = client({ maxRetryAfter: "30s" });
    const error = (await http.get("/429-long-date").catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfter.getTime()).toBe(clock.now() + 90_000);
  });

  it("when retries are used up, retryAfter is the last Retry-After", async () => {
    server.current.script("/429-always", { status: 429, headers: { "retry-after": "2" } });
    const { http, clock, named } = client({ retry: { maxAttempts: 2, backoff: () => 5 } });
    const pending = http.get("/429-always").catch((e: unknown) => e);
    await expect.poll(() => named("http.retry").length).toBe(1);
    await clock.advance("2s");
    const error = (await pending) as RateLimitedError;
    expect(error).toMatchObject({ code: "TW_HTTP_RATE_LIMITED", attempts: 2 });
    expect(error.retryAfter.getTime()).toBe(clock.now() + 2_000);
  });

  it("without Retry-After, an exhausted budget's reset is the time to come back", async () => {
    server.current.script("/429-reset", { status: 429, headers: { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "300" } });
    const { http, clock, named } = client();
    const error = (await http.get("/429-reset").catch((e: unknown) => e)) as RateLimitedError;
    expect(error.retryAfter.getTime()).toBe(clock.now() + 300_000);
    expect(error.rateLimit).toMatchObject({ limit: 100, remaining: 0, exhausted: true });
    expect(named("http.rate_limited")).toEqual([expect.objectContaining({ level: "warn", status: 429, remaining: 0, resetAt: clock.now() + 300_000 })]);
  });

  it("a 429 that names no time is retried on the backoff, then comes back in a minute", async () => {
    server.current.script("/429-bare", { status: 429 });
    const http = createHttpClient({ baseUrl: server.current.url, logger: () => {}, retry: { maxAttempts: 2, backoff: () => 5 } });
    const before = Date.now();
    const error = (await http.get("/429-bare").catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(server.current.received("/429-bare")).toHaveLength(2);
    expect(error.retryAfter.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(error.retryAfter.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it("a 403 whose headers show the budget spent (GitHub's rate limit) is a RateLimitedError too", async () => {
    server.current.script("/403-spent", { status: 403, headers: { "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "3600" } });
    const { http, clock } = client();
    const error = (await http.get("/403-spent").catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfter.getTime()).toBe(clock.now() + 3_600_000);
    expect(server.current.received("/403-spent")).toHaveLength(1);
  });

  it("a 503 with a long Retry-After is an HttpError that still carries retryAfter", async () => {
    server.current.script("/maintenance", { status: 503, headers: { "retry-after": "3600" } });
    const { http, clock } = client();
    const error = (await http.get("/maintenance").catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error).not.toBeInstanceOf(RateLimitedError);
    expect(error.retryAfter?.getTime()).toBe(clock.now() + 3_600_000);
    expect(server.current.received("/maintenance")).toHaveLength(1);
  });
});
