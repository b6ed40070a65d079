import { describe, expect, it } from "vitest";
import { sqliteMemoryCase } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/**
 * API answers hold job data and change at every poll: no browser or proxy may keep them
 * (`cache-control: no-store`), and none may read them as anything but what they say they are
 * (`x-content-type-options: nosniff`). Errors, 401s and 404s included.
 */
describe("API answer headers", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("every JSON answer, probe and metrics answer carries no-store and nosniff", async () => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    a.tw.task("prices", { every: "5m", run: () => 1 });
    const requests: [string, string, { token?: string | null; body?: unknown }, number][] = [
      ["GET", "/api/overview", {}, 200],
      ["GET", "/api/jobs", {}, 200],
      ["GET", "/api/queues", {}, 200],
      ["GET", "/api/tasks", {}, 200],
      ["POST", "/api/tasks/prices/run", {}, 200],
      ["GET", "/api/jobs?status=dead", {}, 400],
      ["GET", "/api/jobs/42", {}, 404],
      ["GET", "/api/nothing-here", {}, 404],
      ["GET", "/api/overview", { token: null }, 401],
      ["GET", "/api/overview", { token: "a-wrong-token-0123456789" }, 401],
      ["POST", "/api/tasks/prices/pause", { body: { until: "1h", padding: "x".repeat(100_000) } }, 413],
      ["GET", "/healthz", { token: null }, 200],
      ["GET", "/readyz", { token: null }, 200],
      ["GET", "/metrics", {}, 200],
    ];
    for (const [method, path, options, status] of requests) {
      const res = await a.request(method, path, options);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get("cache-control"), `${method} ${path}`).toBe("no-store");
      expect(res.headers.get("x-content-type-options"), `${method} ${path}`).toBe("nosniff");
    }
  });

  it("the dashboard's fingerprinted assets keep their long caching, and are nosniff too", async () => {
    const a = await admin();
    const page = await a.request("GET", "/", { token: null });
    expect(page.headers.get("cache-control")).toBe("no-store");
    const asset = /(?:src|href)="(assets\/[^"]+)"/.exec(page.text)![1]!;
    const res = await a.request("GET", asset, { token: null });
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
