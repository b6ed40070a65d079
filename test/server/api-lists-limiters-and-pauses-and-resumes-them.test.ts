import { describe, expect, it } from "vitest";
import type { LimiterView } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { T0 } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("/api/limiters ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("lists each limiter with its rate, its tokens now and its pause", async () => {
    const a = await admin();
    const prices = a.tw.limiter("prices-api", { max: 10, per: "1m", burst: 5 });
    a.tw.limiter("mailer", { max: 2, per: "1s" });
    await prices.tryAcquire(2);

    const res = await a.get<{ limiters: LimiterView[] }>("/api/limiters");
    expect(res.status).toBe(200);
    expect(res.body.limiters).toEqual([
      { name: "prices-api", max: 10, perMs: 60_000, burst: 5, tokens: 3, pausedUntil: null, nextTokenAt: T0 },
      { name: "mailer", max: 2, perMs: 1_000, burst: 1, tokens: 1, pausedUntil: null, nextTokenAt: T0 },
    ]);
  });

  it("pauses a limiter for a duration or until a time, so that it gives no token, and resumes it", async () => {
    const a = await admin();
    const prices = a.tw.limiter("prices-api", { max: 10, per: "1m" });

    const paused = await a.post("/api/limiters/prices-api/pause", { for: "90s" });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ limiter: "prices-api", pausedUntil: T0 + 90_000 });
    expect(await prices.tryAcquire()).toBe(false);
    expect((await a.get<{ limiters: LimiterView[] }>("/api/limiters")).body.limiters[0]).toMatchObject({ tokens: 0, pausedUntil: T0 + 90_000, nextTokenAt: T0 + 90_000 });
    expect(a.named("limiter.paused")).toEqual([expect.objectContaining({ limiter: "prices-api", until: T0 + 90_000, reason: "paused through the admin API" })]);

    const until = new Date(T0 + 3_600_000).toISOString();
    expect((await a.post("/api/limiters/prices-api/pause", { until })).body).toEqual({ limiter: "prices-api", pausedUntil: T0 + 3_600_000 });
    expect((await prices.state()).pausedUntil).toBe(T0 + 3_600_000);

    const resumed = await a.post("/api/limiters/prices-api/resume");
    expect(resumed.body).toEqual({ limiter: "prices-api", resumed: true });
    expect((await prices.state()).pausedUntil).toBeNull();
    expect(await prices.tryAcquire()).toBe(true);
  });

  it("a limiter not defined here is a 404 naming the defined ones; a bad name or body is a 400 naming the field", async () => {
    const a = await admin();
    const prices = a.tw.limiter("prices-api", { max: 10, per: "1m" });
    for (const path of ["/api/limiters/nope/pause", "/api/limiters/nope/resume"]) {
      const res = await a.request("POST", path, { body: { for: "1m" } });
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual({ error: "not_found", message: 'limiter "nope" is not defined in this process (defined: prices-api)' });
    }
    const cases: [string, unknown, RegExp][] = [
      ["/api/limiters/prices-api/pause", {}, /^give until or for, one of them/],
      ["/api/limiters/prices-api/pause", { for: "1m", until: "2h" }, /^give until or for, one of them/],
      ["/api/limiters/prices-api/pause", { for: "soon" }, /^for: invalid duration "soon"/],
      ["/api/limiters/prices-api/pause", { for: 0 }, /^for: must be longer than 0$/],
      ["/api/limiters/prices-api/pause", { until: "2025-01-01T00:00:00Z" }, /^until: 2025-01-01T00:00:00\.000Z is not in the future$/],
      ["/api/limiters/prices-api/pause", { until: 1e20 }, /^until: must be a time from 1970 to 9999/],
      ["/api/limiters/prices-api/pause", { for: "1m", reason: "429" }, /reason/],
      ["/api/limiters/prices-api/pause", "[]", /^expected \{ "until": <epoch ms or ISO time> \} or \{ "for": <a duration such as "90s"> \}$/],
      ["/api/limiters/bad%20name/resume", undefined, /^limiter: a limiter name is 1-128 letters/],
    ];
    for (const [path, body, message] of cases) {
      const res = await a.request("POST", path, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await prices.state()).pausedUntil).toBeNull();
  });
});
