import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import { adminApp, serve } from "../../src/server/index.js";
import { engineFor } from "../support/queue-fixtures.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { TOKEN, adminFor, requestJson } from "./support/admin.js";

describe("bearer token", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("reads and writes without a token get 401 with WWW-Authenticate; with the right token they pass", async () => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    for (const [method, path] of [["GET", "/api/queues"], ["GET", "/api/overview"], ["GET", "/metrics"], ["POST", "/api/queues/mail/retry-failed"]] as const) {
      const missing = await a.request(method, path, { token: null });
      expect(missing.status, `${method} ${path}`).toBe(401);
      expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="tickwork"');
      expect(missing.body).toEqual({ error: "unauthorized", message: "this request needs an Authorization: Bearer <admin token> header" });
      expect((await a.request(method, path)).status, `${method} ${path}`).toBe(200);
    }
  });

  it("a wrong token, one sharing a prefix with the right one, or a longer one, is refused and logged without the token", async () => {
    const a = await admin();
    for (const token of ["x".repeat(TOKEN.length), TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase()]) {
      const res = await a.request("GET", "/api/queues", { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "unauthorized", message: "the admin token is wrong" });
    }
    // The first is logged at once, the other three counted in one line at the minute's end.
    expect(a.named("server.auth_failed")).toHaveLength(1);
    await a.clock.advance("1m");
    const failures = a.named("server.auth_failed");
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatchObject({ level: "warn", method: "GET", path: "/api/queues", reason: "wrong token" });
    expect(failures[1]).toMatchObject({ level: "warn", method: "GET", path: "/api/queues", reason: "wrong token", repeated: 3 });
    expect(JSON.stringify(failures)).not.toContain("xxxx");
  });

  it("an Authorization header that is not a bearer token is refused with what to send", async () => {
    const a = await admin();
    for (const value of [`Basic ${btoa(`admin:${TOKEN}`)}`, "Bearer", `Token ${TOKEN}`, `Bearer ${TOKEN} extra`]) {
      const res = await a.request("GET", "/api/queues", { token: null, headers: { authorization: value } });
      expect(res.status, value).toBe(401);
      expect(res.body).toEqual({ error: "unauthorized", message: 'the Authorization header must read "Bearer <admin token>"' });
    }
    expect((await a.request("GET", "/api/queues", { token: null, headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("probes and the dashboard's shell and assets are open: they carry no data", async () => {
    const a = await admin();
    expect((await a.request("GET", "/healthz", { token: null })).status).toBe(200);
    expect((await a.request("GET", "/readyz", { token: null })).status).toBe(200);
    const page = await a.request("GET", "/", { token: null });
    expect(page.status).toBe(200);
    const assets = [...page.text.matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) expect((await a.request("GET", asset, { token: null })).status).toBe(200);
  });
});

describe('auth: "writes"', () => {
  const admin = adminFor(sqliteMemoryCase());

  it("opens reads, /metrics included; every write still needs the token", async () => {
    const a = await admin({ server: { auth: "writes" } });
    a.tw.queue("mail", { handler: () => {} });
    expect((await a.request("GET", "/api/overview", { token: null })).status).toBe(200);
    expect((await a.request("GET", "/metrics", { token: null })).status).toBe(200);
    expect((await a.request("POST", "/api/queues/mail/retry-failed", { token: null })).status).toBe(401);
    expect((await a.request("POST", "/api/queues/mail/retry-failed", { token: "wrong-token-wrong-token" })).status).toBe(401);
    expect((await a.request("POST", "/api/queues/mail/retry-failed")).status).toBe(200);
  });
});

describe("where the token comes from", () => {
  const engine = engineFor(sqliteMemoryCase());
  const saved = process.env.TICKWORK_ADMIN_TOKEN;
  afterEach(() => {
    if (saved === undefined) delete process.env.TICKWORK_ADMIN_TOKEN;
    else process.env.TICKWORK_ADMIN_TOKEN = saved;
  });

  it("TICKWORK_ADMIN_TOKEN when no token option is given", async () => {
    const { tw } = await engine();
    process.env.TICKWORK_ADMIN_TOKEN = "from-the-environment-0123";
    const server = await serve(tw, { port: 0 });
    try {
      expect((await requestJson(server.url, "GET", "/api/queues", { token: "from-the-environment-0123" })).status).toBe(200);
      expect((await requestJson(server.url, "GET", "/api/queues", { token: TOKEN })).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it("no token anywhere, or a short one, is refused when the app is made, saying what to do", async () => {
    const { tw } = await engine();
    delete process.env.TICKWORK_ADMIN_TOKEN;
    expect(() => adminApp(tw)).toThrow(InvalidInputError);
    expect(() => adminApp(tw)).toThrow(/no admin token: pass \{ token \} or set TICKWORK_ADMIN_TOKEN \(at least 16 characters\)/);
    expect(() => adminApp(tw, { token: "short" })).toThrow(/token: the admin token must be at least 16 characters/);
    expect(() => adminApp(tw, { token: "has a space in it, sixteen+" })).toThrow(/token: the admin token must not contain spaces/);
    await expect(serve(tw, { port: 0, token: TOKEN, auth: "none" as "all" })).rejects.toThrow(/auth/);
  });
});
