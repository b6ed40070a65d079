import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { adminApp } from "../../src/server/index.js";
import { engineFor } from "../support/queue-fixtures.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { TOKEN } from "./support/admin.js";

describe("the dashboard's page and bundle", () => {
  const engine = engineFor(sqliteMemoryCase());

  it("the page loads one script and one stylesheet, both from the app itself, under a strict CSP", async () => {
    const { tw } = await engine();
    const app = adminApp(tw, { token: TOKEN });
    const page = await app.request("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const script = /<script defer src="(assets\/dashboard\.[0-9a-f]{12}\.js)">/.exec(html)?.[1];
    const style = /<link rel="stylesheet" href="(assets\/dashboard\.[0-9a-f]{12}\.css)">/.exec(html)?.[1];
    expect(script && style).toBeTruthy();

    for (const [asset, type] of [[script!, "text/javascript"], [style!, "text/css"]] as const) {
      const res = await app.request(`/${asset}`, { headers: { "accept-encoding": "gzip" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(`${type}; charset=utf-8`);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("content-encoding")).toBe("gzip");
    }
  });

  it("mounted under /admin, the page's relative URLs reach the app's bundle and API", async () => {
    const { tw } = await engine();
    const host = new Hono().route("/admin", adminApp(tw, { token: TOKEN }));

    const page = await host.request("/admin");
    expect(page.status).toBe(200);
    const html = await page.text();
    const base = /data-base="([^"]*)"/.exec(html)![1]!;
    const script = /src="([^"]+)"/.exec(html)![1]!;
    const resolve = (relative: string) => new URL(relative, "http://host/admin").pathname;
    expect(resolve(script)).toMatch(/^\/admin\/assets\/dashboard\.[0-9a-f]{12}\.js$/);
    expect((await host.request(resolve(script))).status).toBe(200);
    const overview = await host.request(resolve(`${base}api/overview`), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(overview.status).toBe(200);
  });

  it("a mount path needing escapes is written escaped into the page", async () => {
    const { tw } = await engine();
    const host = new Hono().route('/a"b<c>', adminApp(tw, { token: TOKEN }));
    const html = await (await host.request("/a%22b%3Cc%3E")).text();
    expect(html).toContain('data-base="a%22b%3Cc%3E/"');
    expect(html).not.toContain('a"b');
  });
});
