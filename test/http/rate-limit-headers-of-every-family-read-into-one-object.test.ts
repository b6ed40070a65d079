import { describe, expect, it } from "vitest";
import { parseMembers, parseRateLimit } from "../../src/http/rate-limit.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const h = (init: Record<string, string>) => new Headers(init);

describe("x-ratelimit-* headers", () => {
  it("reads limit, remaining and a reset in seconds from now", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-limit": "100", "x-ratelimit-remaining": "42", "x-ratelimit-reset": "30" }), NOW);
    expect(rl).toEqual({ limit: 100, remaining: 42, resetAt: NOW + 30_000, exhausted: false, source: "x-ratelimit" });
  });

  it("reads a reset above 10^9 as epoch seconds, against the server's Date header", () => {
    const reset = Date.parse("2026-01-01T00:01:00Z") / 1000;
    // The server's clock is 10 s behind ours: the reset is 60 s after the server's now.
    const rl = parseRateLimit(h({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset), date: new Date(NOW - 10_000).toUTCString() }), NOW);
    expect(rl?.resetAt).toBe(NOW + 70_000);
    const withoutDate = parseRateLimit(h({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) }), NOW);
    expect(withoutDate?.resetAt).toBe(reset * 1000);
  });

  it("reads a reset above 10^12 as epoch milliseconds", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-remaining": "3", "x-ratelimit-reset": String(NOW + 5_000) }), NOW);
    expect(rl?.resetAt).toBe(NOW + 5_000);
  });

  it("reads a fractional seconds reset and Discord's reset-after", () => {
    expect(parseRateLimit(h({ "x-ratelimit-remaining": "1", "x-ratelimit-reset": "1.5" }), NOW)?.resetAt).toBe(NOW + 1_500);
    expect(parseRateLimit(h({ "x-ratelimit-remaining": "1", "x-ratelimit-reset-after": "2.25" }), NOW)?.resetAt).toBe(NOW + 2_250);
  });

  it("reads GitHub's used and resource when remaining is missing", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-limit": "5000", "x-ratelimit-used": "5000", "x-ratelimit-resource": "core" }), NOW);
    expect(rl).toMatchObject({ limit: 5000, remaining: 0, exhausted: true, scope: "core", scopes: { core: { limit: 5000, remaining: 0, resetAt: null } } });
  });

  it("reads Tenero's per-minute and per-month budgets and keeps the tightest as the main figures", () => {
    const rl = parseRateLimit(
      h({
        "x-ratelimit-type": "web-ui-ip",
        "x-ratelimit-minute-limit": "100",
        "x-ratelimit-minute-remaining": "57",
        "x-ratelimit-minute-reset": "21",
        "x-ratelimit-month-limit": "50000",
        "x-ratelimit-month-remaining": "48210",
      }),
      NOW,
    );
    expect(rl).toEqual({
      limit: 100,
      remaining: 57,
      resetAt: NOW + 21_000,
      window: 60_000,
      scope: "minute",
      type: "web-ui-ip",
      exhausted: false,
      source: "x-ratelimit",
      scopes: {
        minute: { limit: 100, remaining: 57, resetAt: NOW + 21_000, window: 60_000 },
        month: { limit: 50000, remaining: 48210, resetAt: null },
      },
    });
  });

  it("makes an exhausted month the main budget even while the minute has calls left", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-minute-remaining": "99", "x-ratelimit-month-remaining": "0", "x-ratelimit-month-reset": "86400" }), NOW);
    expect(rl).toMatchObject({ scope: "month", remaining: 0, exhausted: true, resetAt: NOW + 86_400_000 });
  });

  it("of two exhausted budgets, keeps the one that refills later", () => {
    const rl = parseRateLimit(
      h({ "x-ratelimit-minute-remaining": "0", "x-ratelimit-minute-reset": "40", "x-ratelimit-hour-remaining": "0", "x-ratelimit-hour-reset": "1800" }),
      NOW,
    );
    expect(rl).toMatchObject({ scope: "hour", resetAt: NOW + 1_800_000, window: 3_600_000, exhausted: true });
  });

  it("of two budgets with the same calls left, keeps the smaller share", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-minute-limit": "10", "x-ratelimit-minute-remaining": "5", "x-ratelimit-day-limit": "1000", "x-ratelimit-day-remaining": "5" }), NOW);
    expect(rl?.scope).toBe("day");
  });

  it("reads OpenAI's field-first names and Go-style duration resets", () => {
    const rl = parseRateLimit(
      h({
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "12",
        "x-ratelimit-reset-tokens": "6m0s",
      }),
      NOW,
    );
    expect(rl).toMatchObject({ scope: "tokens", limit: 30000, remaining: 12, resetAt: NOW + 360_000 });
    expect(rl?.scopes?.requests).toEqual({ limit: 500, remaining: 499, resetAt: NOW + 120 });
  });

  it("keeps an x-ratelimit-policy as the policy", () => {
    expect(parseRateLimit(h({ "x-ratelimit-remaining": "1", "x-ratelimit-policy": "60;w=60" }), NOW)?.policy).toBe("60;w=60");
  });
});

describe("IETF RateLimit and RateLimit-Policy headers", () => {
  it("reads the draft-07 dictionary with its policy's window", () => {
    const rl = parseRateLimit(h({ ratelimit: "limit=100, remaining=0, reset=30", "ratelimit-policy": "100;w=60" }), NOW);
    expect(rl).toEqual({ limit: 100, remaining: 0, resetAt: NOW + 30_000, window: 60_000, policy: "100;w=60", exhausted: true, source: "ratelimit" });
  });

  it("takes the window of the policy whose quota matches the limit", () => {
    const rl = parseRateLimit(h({ ratelimit: "limit=100, remaining=50, reset=5", "ratelimit-policy": "10;w=1, 100;w=60;burst=20" }), NOW);
    expect(rl).toMatchObject({ limit: 100, window: 60_000, exhausted: false });
  });

  it("reads the separate RateLimit-Limit, -Remaining and -Reset headers of drafts up to 06", () => {
    const rl = parseRateLimit(h({ "ratelimit-limit": "10", "ratelimit-remaining": "9", "ratelimit-reset": "12", "ratelimit-policy": "10;w=15" }), NOW);
    expect(rl).toEqual({ limit: 10, remaining: 9, resetAt: NOW + 12_000, window: 15_000, policy: "10;w=15", exhausted: false, source: "ratelimit" });
  });

  it("reads the structured form with named policies", () => {
    const rl = parseRateLimit(h({ ratelimit: '"default";r=0;t=30', "ratelimit-policy": '"default";q=100;w=60' }), NOW);
    expect(rl).toEqual({
      limit: 100,
      remaining: 0,
      resetAt: NOW + 30_000,
      window: 60_000,
      policy: "default",
      scope: "default",
      exhausted: true,
      source: "ratelimit",
      scopes: { default: { limit: 100, remaining: 0, resetAt: NOW + 30_000, window: 60_000 } },
    });
  });

  it("of several named policies, keeps the tightest and lists them all", () => {
    const rl = parseRateLimit(
      h({ ratelimit: '"burst";r=5;t=1, "daily";r=900;t=3600', "ratelimit-policy": '"burst";q=10;w=1, "daily";q=1000;w=86400, "monthly";q=20000;w=2592000' }),
      NOW,
    );
    expect(rl).toMatchObject({ scope: "burst", limit: 10, remaining: 5, resetAt: NOW + 1_000, window: 1_000 });
    expect(rl?.scopes).toEqual({
      burst: { limit: 10, remaining: 5, resetAt: NOW + 1_000, window: 1_000 },
      daily: { limit: 1000, remaining: 900, resetAt: NOW + 3_600_000, window: 86_400_000 },
      monthly: { limit: 20000, remaining: null, resetAt: null, window: 2_592_000_000 },
    });
  });

  it("accepts a token where the draft wants a quoted policy name", () => {
    expect(parseRateLimit(h({ ratelimit: "default;r=3;t=10" }), NOW)).toMatchObject({ scope: "default", remaining: 3, resetAt: NOW + 10_000, limit: null });
  });
});

describe("when a response carries no usable rate-limit header", () => {
  it("returns null", () => {
    expect(parseRateLimit(h({ "content-type": "application/json" }), NOW)).toBeNull();
    expect(parseRateLimit(h({ "x-ratelimit-remaining": "unknown", ratelimit: "garbage" }), NOW)).toBeNull();
    expect(parseRateLimit(h({ "x-ratelimit-reset": "30" }), NOW)).toBeNull();
  });

  it("never throws on malformed values", () => {
    const odd = [",,,", '"unterminated', "=;=;", ";r=1", "limit=, remaining=?1", "a=b=c"];
    for (const value of odd) {
      expect(() => parseRateLimit(h({ ratelimit: value, "ratelimit-policy": value, "x-ratelimit-reset": value, "x-ratelimit-remaining": "1" }), NOW)).not.toThrow();
    }
  });
});

describe("both families on one response", () => {
  it("keeps the tighter one as the main figures", () => {
    const rl = parseRateLimit(h({ "x-ratelimit-minute-remaining": "0", "x-ratelimit-minute-reset": "20", ratelimit: '"hourly";r=400;t=1200' }), NOW);
    expect(rl).toMatchObject({ source: "x-ratelimit", scope: "minute", exhausted: true, resetAt: NOW + 20_000 });
    expect(Object.keys(rl?.scopes ?? {})).toEqual(["hourly", "minute"]);
  });
});

describe("the structured-field reader", () => {
  it("reads list members, dictionary members, quoted strings, parameters and booleans", () => {
    expect(parseMembers('"a;b";r=1;t=2.5, 10;w=60;x, limit=7;f=?0, k="q\\"x"')).toEqual([
      { key: null, value: "a;b", params: { r: 1, t: 2.5 } },
      { key: null, value: 10, params: { w: 60, x: true } },
      { key: "limit", value: 7, params: { f: false } },
      { key: "k", value: 'q"x', params: {} },
    ]);
  });
});
