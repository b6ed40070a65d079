import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/http/client.js";
import { RateLimitedError } from "../../src/http/errors.js";
import { sqlite } from "../../src/store/sqlite.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();
const START = "2026-01-01T00:00:00Z";

/** Two engines on one SQLite file, as two processes would be, on one fake clock. */
describe("createHttpClient({ limiter }) with tw.limiter", () => {
  let dir: string;
  let engines: Tickwork[] = [];

  afterEach(async () => {
    await Promise.all(engines.map((tw) => tw.stop()));
    engines = [];
    rmSync(dir, { recursive: true, force: true });
  });

  async function twoProcesses() {
    dir = mkdtempSync(join(tmpdir(), "tickwork-limiter-"));
    const clock = fakeClock(START);
    const open = () => createTickwork({ store: sqlite(join(dir, "db.sqlite")), clock, logger: () => {}, handleSignals: false });
    engines = [await open(), await open()];
    const [a, b] = engines as [Tickwork, Tickwork];
    return { clock, a: a.limiter("up", { max: 2, per: "1s" }), b: b.limiter("up", { max: 2, per: "1s" }) };
  }

  it("each attempt takes a token first: the second call waits for the token on the clock", async () => {
    server.current.script("/x", { json: 1 }, { json: 2 });
    const { clock, a } = await twoProcesses();
    const log = captureEvents();
    const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, limiter: a });
    await expect(http.get("/x")).resolves.toMatchObject({ data: 1 });
    const second = http.get("/x");
    // A token every 500 ms (2 per second, burst 1): nothing goes before then.
    await expect.poll(() => clock.pending).toBeGreaterThan(0);
    expect(server.current.received("/x")).toHaveLength(1);
    await clock.advance("500ms");
    await expect(second).resolves.toMatchObject({ data: 2 });
    expect(server.current.received("/x")).toHaveLength(2);
  });

  it("a 429 with Retry-After pauses the limiter in the other process too, until that time", async () => {
    server.current.script("/busy", { status: 429, headers: { "retry-after": "30" } });
    const { clock, a, b } = await twoProcesses();
    const log = captureEvents();
    const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, limiter: a, retry: { maxAttempts: 1 } });
    await expect(http.get("/busy")).rejects.toBeInstanceOf(RateLimitedError);
    const t0 = Date.parse(START);
    expect(await b.state()).toMatchObject({ pausedUntil: t0 + 30_000, tokens: 0 });
    expect(await b.tryAcquire()).toBe(false);
    await clock.set(t0 + 30_000);
    expect(await b.tryAcquire()).toBe(true);
  });

  it("a 200 that reports the budget spent (remaining 0 with a reset) pauses the limiter until the reset", async () => {
    server.current.script("/last", { json: "ok", headers: { "x-ratelimit-limit": "10", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "20" } });
    const { a, b } = await twoProcesses();
    const log = captureEvents();
    const clock = fakeClock(START);
    const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, limiter: a });
    await expect(http.get("/last")).resolves.toMatchObject({ data: "ok" });
    const state = await b.state();
    expect(state.pausedUntil).toBe(Date.parse(START) + 20_000);
  });

  it("a budget paused beyond maxRetryAfter ends the request at once with RateLimitedError until the pause's end, sending nothing", async () => {
    server.current.script("/later", { json: "never" });
    const { clock, a, b } = await twoProcesses();
    const log = captureEvents();
    const t0 = Date.parse(START);
    await b.pause(new Date(t0 + 3_600_000));
    const http = createHttpClient({ baseUrl: server.current.url, clock, logger: log.logger, limiter: a, maxRetryAfter: "60s" });
    const error = await http.get("/later").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfter.getTime()).toBe(t0 + 3_600_000);
    expect(server.current.received("/later")).toHaveLength(0);
    // A pause within maxRetryAfter is waited out instead.
    await b.resume();
    await b.pause(new Date(t0 + 30_000));
    const waiting = http.get("/later");
    await expect.poll(() => clock.pending).toBeGreaterThan(0);
    await clock.set(t0 + 30_000);
    await expect(waiting).resolves.toMatchObject({ data: "never" });
  });

  it("a client refuses a limiter that is not one", () => {
    expect(() => createHttpClient({ limiter: {} as never })).toThrow(/limiter/);
  });
});
