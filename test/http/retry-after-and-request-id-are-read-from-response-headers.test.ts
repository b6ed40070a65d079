import { describe, expect, it } from "vitest";
import { parseRetryAfter, requestIdOf } from "../../src/http/headers.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("Retry-After", () => {
  it("reads delay-seconds", () => {
    expect(parseRetryAfter(new Headers({ "retry-after": "120" }), NOW)).toBe(120_000);
    expect(parseRetryAfter(new Headers({ "retry-after": " 0 " }), NOW)).toBe(0);
    expect(parseRetryAfter(new Headers({ "retry-after": "1.5" }), NOW)).toBe(1_500);
  });

  it("reads an HTTP date as the time after the server's Date header, whatever the client's clock says", () => {
    const serverNow = Date.parse("2025-06-01T12:00:00Z");
    const headers = new Headers({ date: new Date(serverNow).toUTCString(), "retry-after": new Date(serverNow + 90_000).toUTCString() });
    expect(parseRetryAfter(headers, NOW)).toBe(90_000);
  });

  it("reads an HTTP date against the client's clock when the server sends no Date", () => {
    expect(parseRetryAfter(new Headers({ "retry-after": new Date(NOW + 45_000).toUTCString() }), NOW)).toBe(45_000);
  });

  it("makes a date in the past a zero wait", () => {
    expect(parseRetryAfter(new Headers({ "retry-after": new Date(NOW - 5_000).toUTCString() }), NOW)).toBe(0);
  });

  it("returns null when absent or unreadable", () => {
    expect(parseRetryAfter(new Headers(), NOW)).toBeNull();
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), NOW)).toBeNull();
    expect(parseRetryAfter(new Headers({ "retry-after": "-3" }), NOW)).toBeNull();
  });
});

describe("the upstream's request id", () => {
  it("prefers cf-ray, then x-request-id, then the other known headers", () => {
    expect(requestIdOf(new Headers({ "x-request-id": "req-1", "cf-ray": "8f1a2b3c4d5e6f70-AMS" }))).toBe("8f1a2b3c4d5e6f70-AMS");
    expect(requestIdOf(new Headers({ "x-request-id": "req-1" }))).toBe("req-1");
    expect(requestIdOf(new Headers({ "x-amzn-requestid": "c0ffee" }))).toBe("c0ffee");
    expect(requestIdOf(new Headers({ "x-github-request-id": "AB12:CD34" }))).toBe("AB12:CD34");
  });

  it("is null when the response carries none", () => {
    expect(requestIdOf(new Headers({ "content-type": "text/plain", "x-request-id": " " }))).toBeNull();
  });
});
