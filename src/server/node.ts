import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
// Types only: `@hono/node-server` is an optional peer, loaded when serve() is called.
import type * as nodeServer from "@hono/node-server";
import type { Hono } from "hono";
import type { Tickwork } from "../tickwork.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { createAdminApp, type AdminApp, type AdminAppOptions } from "./app.js";
import { parseMetricsOptions, prometheusMetrics, type MetricsOptions } from "./metrics.js";
import { requirePeer } from "../store/peer.js";

export const TOKEN_VARIABLE = "TICKWORK_ADMIN_TOKEN";

export type AdminOptions = Omit<AdminAppOptions, "token" | "metrics"> & {
  /** The bearer token; default the `TICKWORK_ADMIN_TOKEN` environment variable. */
  token?: string;
  /** Prometheus metrics at `/metrics`, with the process's default metrics unless `{ defaultMetrics: false }`; default true. */
  metrics?: boolean | MetricsOptions;
};

export interface ServeOptions extends AdminOptions {
  /** Default 4000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the admin API is not exposed beyond this machine unless asked. */
  host?: string;
}

export interface Serving {
  /** `http://<host>:<port>/`, the dashboard. */
  url: string;
  port: number;
  /** Stops listening, closes open connections and stops observing the engine (the engine keeps running). */
  close(): Promise<void>;
}

/** The admin app for Node: token from the option or `TICKWORK_ADMIN_TOKEN`, Prometheus metrics at `/metrics`. */
export function adminApp(tw: Tickwork, options: AdminOptions = {}): Hono {
  return nodeAdmin(tw, options).app;
}

/** Serves the admin app with @hono/node-server. */
export async function serve(tw: Tickwork, options: ServeOptions = {}): Promise<Serving> {
  const { port = 4000, host = "127.0.0.1", ...adminOptions } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidInputError(`serve: port must be an integer from 0 to 65535, got ${String(port)}`);
  const { createAdaptorServer } = requirePeer<typeof nodeServer>("@hono/node-server", "serve() from tickwork/server");
  const admin = nodeAdmin(tw, adminOptions);
  // overrideGlobalObjects: false keeps the process's own Request and Response for everything else in it.
  const server = createAdaptorServer({ fetch: admin.app.fetch, overrideGlobalObjects: false }) as Server;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    admin.close();
    throw error;
  }
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  tw.logger.info("server.listening", { url: `http://${shownHost}:${bound}/` });
  return {
    url: `http://${shownHost}:${bound}/`,
    port: bound,
    close() {
      admin.close();
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function nodeAdmin(tw: Tickwork, options: AdminOptions): AdminApp {
  const { metrics = true, token = process.env[TOKEN_VARIABLE], ...rest } = options;
  if (token === undefined || token === "") {
    throw new InvalidInputError(
      `adminApp: no admin token: pass { token } or set ${TOKEN_VARIABLE} (at least 16 characters). ` +
        `Writes always need it; reads too unless auth: "writes".`,
    );
  }
  if (typeof metrics !== "boolean" && (typeof metrics !== "object" || metrics === null || Array.isArray(metrics))) {
    throw new InvalidInputError(`adminApp: metrics must be true, false or { defaultMetrics }, got ${describe(metrics)}`);
  }
  const metricsOptions = typeof metrics === "boolean" ? (metrics ? {} : undefined) : parseMetricsOptions(metrics, "adminApp: metrics");
  const exposition = metricsOptions ? prometheusMetrics(tw, metricsOptions) : undefined;
  try {
    return createAdminApp(tw, { ...rest, token, metrics: exposition });
  } catch (error) {
    exposition?.close();
    throw error;
  }
}
