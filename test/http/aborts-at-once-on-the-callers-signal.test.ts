import { describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/http/client.js";
import { within } from "../support/real-time.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();

class Stop extends Error {}

describe("the caller's AbortSignal", () => {
  it("cancels a request in flight at once, with the signal's reason, and does not retry it", async () => {
    server.current.script("/hangs", { hang: true });
    const { logger, named } = captureEvents();
    // A long per-attempt timeout: only the abort can end this request soon.
    const http = createHttpClient({ baseUrl: server.current.url, logger, timeout: "1h" });
    const controller = new AbortController();
    const pending = http.get("/hangs", { signal: controller.signal });
    await server.current.waitForRequests("/hangs", 1);
    const reason = new Stop("task stopped");
    controller.abort(reason);
    await expect(within(pending, 2_000, "the aborted request")).rejects.toBe(reason);
    expect(server.current.received("/hangs")).toHaveLength(1);
    expect(named("http.retry")).toEqual([]);
  });

  it("cancels the wait between attempts at once", async () => {
    server.current.script("/busy", { status: 503 });
    const { logger, named } = captureEvents();
    // An hour's backoff: only the abort can end this wait soon.
    const http = createHttpClient({ baseUrl: server.current.url, logger, retry: { maxAttempts: 3, backoff: () => 3_600_000 } });
    const controller = new AbortController();
    const pending = http.get("/busy", { signal: controller.signal });
    await expect.poll(() => named("http.retry").length).toBe(1);
    controller.abort(new Stop("shutting down"));
    await expect(within(pending, 2_000, "the aborted wait")).rejects.toBeInstanceOf(Stop);
    expect(server.current.received("/busy")).toHaveLength(1);
  });

  it("an already aborted signal sends nothing", async () => {
    server.current.script("/never", { json: 1 });
    const http = createHttpClient({ baseUrl: server.current.url, logger: () => {} });
    const reason = new Stop("before");
    await expect(http.get("/never", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(server.current.received("/never")).toHaveLength(0);
  });
});
