import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { adminApp } from "../../src/server/index.js";
import { engineFor } from "../support/queue-fixtures.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { TOKEN } from "./support/admin.js";

/**
 * `app.route("/admin", adminApp(tw))` in a user's own Hono app, served by @hono/node-server on a
 * real port: the dashboard answers at `/admin` and at `/admin/`, and from either page its relative
 * URLs reach the bundle and the API under `/admin`.
 */
describe("the admin app mounted under /admin of a Hono app served over HTTP", () => {
  const engine = engineFor(sqliteMemoryCase());
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function hostOnLoopback(): Promise<string> {
    const { tw } = await engine();
    const host = new Hono();
    host.get("/", (c) => c.text("the user's own home page"));
    host.route("/admin", adminApp(tw, { token: TOKEN }));
    server = createAdaptorServer({ fetch: host.fetch }) as Server;
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("serves the dashboard at /admin/ and at /admin, and each page's script and API URLs resolve under /admin", async () => {
    const origin = await hostOnLoopback();
    for (const pagePath of ["/admin/", "/admin"]) {
      const page = await fetch(`${origin}${pagePath}`, { redirect: "manual" });
      expect(page.status, pagePath).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
      const html = await page.text();
      expect(html).toContain("<title>tickwork</title>");

      // The browser resolves the page's relative URLs against the page's own URL.
      const script = new URL(/<script defer src="([^"]+)"/.exec(html)![1]!, `${origin}${pagePath}`);
      expect(script.pathname).toMatch(/^\/admin\/assets\/dashboard\.[0-9a-f]{12}\.js$/);
      expect((await fetch(script)).status).toBe(200);
      const base = /data-base="([^"]*)"/.exec(html)![1]!;
      const overview = await fetch(new URL(`${base}api/overview`, `${origin}${pagePath}`), { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(overview.status).toBe(200);
      expect(await overview.json()).toHaveProperty("queues");
    }
  });

  it("serves the page only at the mount root: other paths with a trailing slash stay 404s, and the host's own routes are untouched", async () => {
    const origin = await hostOnLoopback();
    for (const path of ["/admin/api/", "/admin/nothing-here/", "/admin//", "/admin/assets/"]) {
      const res = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain("<html");
    }
    expect(await (await fetch(`${origin}/`)).text()).toBe("the user's own home page");
    expect((await fetch(`${origin}/adminx/`)).status).toBe(404);
  });
});
