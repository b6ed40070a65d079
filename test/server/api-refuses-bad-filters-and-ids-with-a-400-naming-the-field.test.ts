import { describe, expect, it } from "vitest";
import { MAX_SCOPE_LENGTH } from "../../src/idempotency/input.js";
import { allStoreCases } from "../support/stores.js";
import { TOKEN, adminFor } from "./support/admin.js";

/**
 * Every bad input gets a 400 whose message names the field, never a 500 or a database's error:
 * each case runs on every store, PostgreSQL included (where NUL bytes and ids beyond 64 bits would
 * otherwise come back as SQL errors).
 */
describe.each(allStoreCases())("bad filters, ids and bodies ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  const cases: [string, string, RegExp][] = [
    ["/api/jobs?status=dead", "invalid_query", /^status: expected one of pending, running, succeeded, failed, cancelled$/],
    ["/api/jobs?state=failed", "invalid_query", /^unknown parameter "state" \(expected queue, status, due, key, parent, id, order, before, after, limit\)$/],
    ["/api/jobs?due=yes", "invalid_query", /^due: expected true \(pending jobs due now\) or false \(pending jobs scheduled for later\)$/],
    ["/api/jobs?status=failed&due=true", "invalid_query", /^due: applies to pending jobs, not to status "failed"$/],
    ["/api/jobs?parent=abc", "invalid_query", /^parent: a job id is a positive integer such as "42"$/],
    ["/api/jobs?parent=9223372036854775808", "invalid_query", /^parent: a job id is at most 9223372036854775807$/],
    ["/api/jobs?id=abc", "invalid_query", /^id: a job id is a positive integer such as "42"$/],
    ["/api/jobs?id=9223372036854775808", "invalid_query", /^id: a job id is at most 9223372036854775807$/],
    ["/api/jobs?id=1&queue=nope", "unknown_queue", /^unknown queue "nope": declare it with tw.queue\("nope", \.\.\.\) first \(declared: mail\)$/],
    ["/api/jobs?status=failed&status=pending", "invalid_query", /^status: given 2 times; give it once$/],
    ["/api/jobs?queue=nope", "unknown_queue", /^unknown queue "nope": declare it with tw.queue\("nope", \.\.\.\) first \(declared: mail\)$/],
    ["/api/jobs?queue=bad%20name", "invalid_query", /^queue: a queue name is 1-128 letters/],
    ["/api/jobs?key=a%00b", "invalid_query", /^key: contains a NUL character, which no store can hold$/],
    ["/api/jobs?key=", "invalid_query", /^key: must not be empty$/],
    ["/api/jobs?limit=0", "invalid_query", /^limit: an integer from 1 to 500$/],
    ["/api/jobs?limit=501", "invalid_query", /^limit: an integer from 1 to 500$/],
    ["/api/jobs?limit=ten", "invalid_query", /^limit: an integer from 1 to 500$/],
    ["/api/jobs?before=-1", "invalid_query", /^before: a job id is a positive integer such as "42"$/],
    ["/api/jobs?before=9223372036854775808", "invalid_query", /^before: a job id is at most 9223372036854775807$/],
    ["/api/jobs/abc", "invalid_path", /^id: a job id is a positive integer such as "42"$/],
    ["/api/jobs/0", "invalid_path", /^id: a job id is a positive integer such as "42"$/],
    ["/api/jobs/99999999999999999999", "invalid_path", /^id: a job id is a positive integer such as "42"$/],
    ["/api/jobs/9223372036854775808", "invalid_path", /^id: a job id is at most 9223372036854775807$/],
    ["/api/jobs/abc/payload", "invalid_path", /^id: a job id is a positive integer such as "42"$/],
    ["/api/idempotency?scope=%00", "invalid_query", /^scope: contains a NUL character, which no store can hold$/],
    ["/api/idempotency", "invalid_query", /^scope: required$/],
  ];

  it.each(cases)("GET %s is a 400 (%s)", async (path, error, message) => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    const res = await a.get(path);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.body.message).toMatch(message);
  });

  it("the largest 64-bit id is well-formed: 404, not a database error", async () => {
    const a = await admin();
    const res = await a.get("/api/jobs/9223372036854775807");
    expect(res.status).toBe(404);
  });

  it("refuses bad ids in writes and bad bodies, naming the field", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: () => 1 });
    const expectations: [string, unknown, string, RegExp][] = [
      ["/api/jobs/x1/retry", undefined, "invalid_path", /^id: a job id/],
      ["/api/jobs/1e3/cancel", undefined, "invalid_path", /^id: a job id/],
      ["/api/jobs/-4/promote", undefined, "invalid_path", /^id: a job id/],
      ["/api/tasks/prices/pause", "{not json", "invalid_body", /^the body must be JSON, e\.g\. \{"until":"1h"\}/],
      ["/api/tasks/prices/pause", {}, "invalid_body", /^until: /],
      ["/api/tasks/prices/pause", { until: "soon" }, "invalid_body", /^until: expected epoch ms, an ISO 8601 time or a duration such as "30m" or "2h", got "soon"$/],
      ["/api/tasks/prices/pause", { until: "2026-13-45T00:00:00Z" }, "invalid_body", /^until: not a valid ISO 8601 time/],
      ["/api/tasks/prices/pause", { until: -5 }, "invalid_body", /^until: epoch milliseconds must be a non-negative integer, got -5$/],
      ["/api/tasks/prices/pause", { until: "2025-01-01T00:00:00Z" }, "invalid_body", /^until: 2025-01-01T00:00:00\.000Z is not in the future$/],
      ["/api/tasks/prices/pause", { until: "1h", task: "x" }, "invalid_body", /task/],
      ["/api/tasks/bad%20name/run", undefined, "invalid_path", /^task: a task name is 1-128 letters/],
      // Past the bounds every store holds: a 500 with PostgreSQL's 22003 before these were checked here.
      ["/api/tasks/all/pause", { until: 1e20 }, "invalid_body", /^until: must be a time from 1970 to 9999 \(epoch milliseconds 0 to 253402300799999\), got 100000000000000000000$/],
      ["/api/tasks/prices/pause", { until: 253402300800000 }, "invalid_body", /^until: must be a time from 1970 to 9999/],
      ["/api/tasks/prices/pause", { until: "36501d" }, "invalid_body", /^until: expected epoch ms/],
    ];
    for (const [path, body, error, message] of expectations) {
      const res = await a.request("POST", path, { body });
      expect(res.status, path).toBe(400);
      expect(res.body.error, path).toBe(error);
      expect(res.body.message, `${path} ${JSON.stringify(body)}`).toMatch(message);
    }
  });

  it("refuses times past 9999, text a store cannot hold and bad cursors in delivery and idempotency routes", async () => {
    const a = await admin();
    a.tw.delivery("hooks", { send: () => {} });
    const cursor = (fields: unknown[]) => Buffer.from(JSON.stringify(fields)).toString("base64url");
    const posts: [string, string, string, RegExp][] = [
      ["/api/deliveries/hooks/replay", JSON.stringify({ since: 1e20 }), "invalid_body", /^since: must be a time from 1970 to 9999/],
      ["/api/deliveries/hooks/replay", JSON.stringify({ since: "+275760-09-13T00:00:00Z" }), "invalid_body", /^since: /],
      ["/api/deliveries/hooks/replay", '{"id":"item-\\ud800"}', "invalid_body", /^id: is not well-formed Unicode \(a lone surrogate at index 5\)/],
      ["/api/deliveries/hooks/replay", '{"id":"a\\u0000b"}', "invalid_body", /^id: contains a NUL character/],
      ["/api/deliveries/hooks/replay", JSON.stringify({ since: "1h", limit: 1e20 }), "invalid_body", /^limit: /],
    ];
    for (const [path, body, error, message] of posts) {
      const res = await a.request("POST", path, { body });
      expect(res.status, body).toBe(400);
      expect(res.body.error, body).toBe(error);
      expect(res.body.message, body).toMatch(message);
    }
    const gets: [string, RegExp][] = [
      [`/api/idempotency?scope=s&before=${cursor([1, "key-\ud800", "op"])}`, /^before: not a cursor from a previous page/],
      [`/api/idempotency?scope=s&before=${cursor([1e20, "key", "op"])}`, /^before: not a cursor from a previous page/],
      [`/api/deliveries/hooks/dropped?before=${cursor([253402300800000, "id"])}`, /^before: not a cursor from a previous page/],
      [`/api/deliveries/hooks/dropped?before=${cursor([1, "\udc00"])}`, /^before: not a cursor from a previous page/],
      [`/api/jobs?key=${"k".repeat(256)}`, /^key: at most 255 characters$/],
      [`/api/idempotency?scope=${"s".repeat(MAX_SCOPE_LENGTH + 1)}`, new RegExp(`^scope: at most ${MAX_SCOPE_LENGTH} characters$`)],
      ["/api/deliveries/a%00b/pending", /^delivery: contains a NUL character/],
    ];
    for (const [path, message] of gets) {
      const res = await a.get(path);
      expect(res.status, path).toBe(400);
      expect(res.body.message, path).toMatch(message);
    }
  });

  it("refuses a body larger than 64 KiB, declared or chunked, with a 413 naming the limit", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: () => 1 });
    const res = await a.request("POST", "/api/tasks/prices/pause", { body: JSON.stringify({ until: "1h", padding: "x".repeat(1_000_000) }) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: "body_too_large", message: "the body must be at most 65536 bytes" });
    // Sent in chunks, with no declared length: counted as it arrives.
    const chunk = new TextEncoder().encode(" ".repeat(16_384));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 16) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const chunked = await fetch(new URL("/api/tasks/prices/pause", a.url), { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await chunked.json()).toEqual({ error: "body_too_large", message: "the body must be at most 65536 bytes" });
    // A body-less request of a method no route has is a 404, not an error.
    expect((await a.request("DELETE", "/api/deliveries")).status).toBe(404);
    expect((await a.tw.scheduler.status()).tasks[0]!.paused).toBe(false);
  });

  it("an unknown route is a JSON 404", async () => {
    const a = await admin();
    const res = await a.get("/api/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "not_found", message: "no route for GET /api/nothing-here" });
  });
});
