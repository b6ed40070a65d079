import { Hono, type Context, type MiddlewareHandler } from "hono";
import { compress } from "hono/compress";
import * as z from "zod";
import type { Tickwork } from "../tickwork.js";
import { durationMs, parseOptions } from "../core/options.js";
import { deliveryRoutes } from "./api/deliveries.js";
import { fanoutRoutes } from "./api/fanouts.js";
import { healthRoutes } from "./api/health.js";
import { idempotencyRoutes } from "./api/idempotency.js";
import { jobRoutes } from "./api/jobs.js";
import { limiterRoutes } from "./api/limiters.js";
import { overviewRoutes } from "./api/overview.js";
import { queueRoutes } from "./api/queues.js";
import { taskRoutes } from "./api/tasks.js";
import { AuthFailureLog } from "./auth-failures.js";
import { bearerAuth } from "./auth.js";
import { dashboardRoutes } from "./dashboard/page.js";
import { errorResponse } from "./errors.js";
import type { MetricsExposition } from "./metrics.js";
import { Throughput } from "./throughput.js";

const MIN_TOKEN_LENGTH = 16;

const adminAppOptionsSchema = z
  .object({
    /** The bearer token of the API; at least 16 characters, no spaces. */
    token: z
      .string({ error: "expected the admin token, a string" })
      .min(MIN_TOKEN_LENGTH, `the admin token must be at least ${MIN_TOKEN_LENGTH} characters`)
      .regex(/^\S+$/, "the admin token must not contain spaces"),
    /** `all` (default): reads need the token too. `writes`: reads are open; writes always need it. */
    auth: z.enum(["all", "writes"]).default("all"),
    /** How often the dashboard refreshes; default 2s. */
    refreshInterval: durationMs.default(2_000).refine((ms) => ms >= 250, "at least 250ms"),
    /** Served at `/metrics` (behind the token like any read); absent: no `/metrics`. */
    metrics: z.custom<MetricsExposition>((v) => typeof v === "object" && v !== null && "render" in v, "expected a metrics exposition").optional(),
  })
  .strict();

export type AdminAppOptions = z.input<typeof adminAppOptionsSchema>;

export interface AdminApp {
  app: Hono;
  /** Stops observing the engine's events (the throughput counts, the metrics). */
  close(): void;
}

/**
 * The admin app over an engine, on web standards only (runs in Node and in workerd): the JSON API
 * under `/api`, the dashboard at `/`, `/healthz` and `/readyz`, and `/metrics` when given an
 * exposition. Every write needs the bearer token, and every read too unless `auth: "writes"`.
 */
export function createAdminApp(tw: Tickwork, options: AdminAppOptions): AdminApp {
  const o = parseOptions(adminAppOptionsSchema, options, "adminApp");
  const throughput = new Throughput();
  const stopThroughput = tw.logger.observe((event) => throughput.observe(event));
  const authFailures = new AuthFailureLog(tw.logger, tw.clock);
  const auth = bearerAuth({ token: o.token, mode: o.auth, failures: authFailures });
  const onError = (error: Error, c: Context) => errorResponse(c, error, tw.logger);

  const api = new Hono();
  api.use(auth);
  queueRoutes(api, tw);
  jobRoutes(api, tw);
  taskRoutes(api, tw);
  idempotencyRoutes(api, tw);
  deliveryRoutes(api, tw);
  fanoutRoutes(api, tw);
  limiterRoutes(api, tw);
  overviewRoutes(api, tw, throughput);
  api.onError(onError);

  const app = new Hono();
  app.use(compress());
  app.use(apiHeaders);
  healthRoutes(app, tw);
  app.route("/api", api);
  const metrics = o.metrics;
  if (metrics) {
    app.get("/metrics", auth, async (c) => c.body(await metrics.render(), 200, { "content-type": metrics.contentType }));
  }
  dashboardRoutes(app, { refreshMs: o.refreshInterval });
  app.notFound((c) => c.json({ error: "not_found", message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError(onError);

  return {
    app,
    close() {
      authFailures.flush();
      stopThroughput();
      metrics?.close();
    },
  };
}

/**
 * Every answer is no-sniff; API answers (JSON, metrics, probes) are never cached, by browsers or
 * proxies: they hold job data and change at each poll. The dashboard's assets set their own caching.
 */
const apiHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set("x-content-type-options", "nosniff");
  if (!c.res.headers.has("cache-control")) c.res.headers.set("cache-control", "no-store");
};
