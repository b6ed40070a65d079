import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/**
 * Every bad input gets a 400 whose message names the field, never a 500 or a database's error:
 * each case runs on every store, PostgreSQL included (where NUL bytes and ids beyond 64 bits would
 * otherwise come back as SQL errors).
 */
describe.each(allStoreCases())("bad filters, ids and bodies ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  const cases: [string, string, RegExp][] = [
    ["/api/jobs?status=dead", "invalid_query", /^status: expected one of pending, running, succeeded, failed, cancelled$/],
    ["/api/jobs?state=failed", "invalid_query", /^unknown parameter "state" \(expected queue, status, key, before, limit\)$/],
    ["/api/jobs?status=failed&status=pending", "invalid_query", /^status: given 2 times; give it once$/],
    ["/api/jobs?queue=nope", "unknown_queue", /^unknown queue "nope": declare it with tw.queue\("nope", \.\.\.\) first \(declared: mail\)$/],
    ["/api/jobs?queue=bad%20name", "invalid_query", /^queue: a queue name is 1-128 letters/],
    ["/api/jobs?key=a%00b", "invalid_query", /^key: must not contain NUL/],
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
    ["/api/idempotency?scope=%00", "invalid_query", /^scope: must not contain NUL/],
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
      ["/api/tasks/prices/pause", "{not json", "invalid_body", /^the body must be JSON, e\.g\. \{"until":"1h"\}/],
      ["/api/tasks/prices/pause", {}, "invalid_body", /^until: /],
      ["/api/tasks/prices/pause", { until: "soon" }, "invalid_body", /^until: expected epoch ms, an ISO 8601 time or a duration such as "30m" or "2h", got "soon"$/],
      ["/api/tasks/prices/pause", { until: "2026-13-45T00:00:00Z" }, "invalid_body", /^until: not a valid ISO 8601 time/],
      ["/api/tasks/prices/pause", { until: -5 }, "invalid_body", /^until: epoch milliseconds must be a non-negative integer, got -5$/],
      ["/api/tasks/prices/pause", { until: "2025-01-01T00:00:00Z" }, "invalid_body", /^until: 2025-01-01T00:00:00\.000Z is not in the future$/],
      ["/api/tasks/prices/pause", { until: "1h", task: "x" }, "invalid_body", /task/],
      ["/api/tasks/bad%20name/run", undefined, "invalid_path", /^task: a task name is 1-128 letters/],
    ];
    for (const [path, body, error, message] of expectations) {
      const res = await a.request("POST", path, { body });
      expect(res.status, path).toBe(400);
      expect(res.body.error, path).toBe(error);
      expect(res.body.message, `${path} ${JSON.stringify(body)}`).toMatch(message);
    }
  });

  it("an unknown route is a JSON 404", async () => {
    const a = await admin();
    const res = await a.get("/api/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "not_found", message: "no route for GET /api/nothing-here" });
  });
});
