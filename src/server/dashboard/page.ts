import type { Context, Hono } from "hono";
import { routePath } from "hono/route";
import { dashboardScript, dashboardStyle, dashboardVersion } from "./assets.generated.js";

/**
 * The page is a shell: the bundle (Preact and uPlot, built by `npm run build:dashboard` into
 * `assets.generated.ts`) renders it from `api/overview`. Everything is served from this app, so the
 * dashboard works offline. Its URLs are relative, so the app can be mounted under any path.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SCRIPT = `assets/dashboard.${dashboardVersion}.js`;
const STYLE = `assets/dashboard.${dashboardVersion}.css`;

export function dashboardRoutes(app: Hono, options: { refreshMs: number }): void {
  const dashboard = (c: Context) => {
    c.header("content-security-policy", CSP);
    c.header("x-content-type-options", "nosniff");
    c.header("referrer-policy", "no-referrer");
    c.header("cache-control", "no-store");
    return c.html(page(options.refreshMs, base(c.req.path)));
  };
  app.get("/", dashboard);

  const immutable = { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" };
  app.get(`/${SCRIPT}`, (c) => c.body(dashboardScript, 200, { ...immutable, "content-type": "text/javascript; charset=utf-8" }));
  app.get(`/${STYLE}`, (c) => c.body(dashboardStyle, 200, { ...immutable, "content-type": "text/css; charset=utf-8" }));

  // Mounted by `app.route("/admin", ...)`, the "/" above becomes "/admin" only, and Hono's routes
  // are strict about a trailing slash, so "/admin/" would answer 404. This catch-all, the app's last
  // GET route, serves the page there too and passes every other path on to not-found.
  app.get("/*", (c, next) => (atMountRootWithSlash(c) ? dashboard(c) : next()));
}

/**
 * Whether the request is the mount path plus "/": it ends with a slash and has as many segments as
 * this catch-all's route ("/admin/*" for "/admin/"), whatever the mount path's parameters match.
 */
function atMountRootWithSlash(c: Context): boolean {
  const path = c.req.path;
  return path.endsWith("/") && path.split("/").length === routePath(c).split("/").length;
}

/**
 * The app's root relative to the page's URL: "" at `/` or `/admin/`, "admin/" at `/admin` (mounted,
 * no trailing slash). Relative rather than absolute, so a proxy that strips a prefix keeps working.
 */
function base(path: string): string {
  if (path.endsWith("/")) return "";
  const segment = path.slice(path.lastIndexOf("/") + 1);
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // Not percent-encoded text: encode it as it is.
  }
  return `${encodeURIComponent(decoded)}/`;
}

function page(refreshMs: number, base: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tickwork</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}${STYLE}">
<script defer src="${base}${SCRIPT}"></script>
</head>
<body>
<div id="app" data-base="${base}" data-refresh-ms="${refreshMs}"><p class="loading">Loading&hellip;</p></div>
</body>
</html>
`;
}
