import type { D1Database, DurableObjectNamespace, KVNamespace } from "@cloudflare/workers-types/index.ts";
import type { LogLevel } from "../../src/index.js";
import type { LogsBinding } from "../../src/runtime/cloudflare/index.js";
import type { AggregatorDO } from "./aggregator-do.js";
import type { PortfolioDO } from "./portfolio-do.js";
import type { PriceAlertDO, PriceCollectorDO } from "./receivers.js";
import type { SymbolRegistryDO } from "./registry-do.js";
import type { SchedulerDO } from "./scheduler-do.js";

/** The Worker's bindings, as wrangler.jsonc declares them. */
export interface Env {
  /** Seed 003's single scheduler: `env.SCHEDULER.idFromName("v1")`. */
  SCHEDULER: DurableObjectNamespace<SchedulerDO>;
  /** Seed 002: one portfolio per user, `idFromName(userId)`; seed 000's callbacks go there. */
  PORTFOLIO: DurableObjectNamespace<PortfolioDO>;
  /** Seed 000: the account-value aggregator, `idFromName("v1")`. */
  AGGREGATOR: DurableObjectNamespace<AggregatorDO>;
  /** Seed 001: the symbol registry, `idFromName("v1")`, and its 7 collectors and 70 alerts. */
  REGISTRY: DurableObjectNamespace<SymbolRegistryDO>;
  COLLECTOR: DurableObjectNamespace<PriceCollectorDO>;
  ALERT: DurableObjectNamespace<PriceAlertDO>;
  /** The objects' log level: debug, info (default), warn, error or critical. */
  LOG_LEVEL?: string;
  /** Receivers that refuse every push (comma-separated names): for drills and tests. */
  FAILING_RECEIVERS?: string;
  /** Prices by token, `tenero:price:{tokenId}`, written by the scheduler and read by `GET /api/prices`. */
  PRICES: KVNamespace;
  /** The competition's swaps and the sweep's cursor (`competition_state`). */
  DB: D1Database;
  /** The worker-logs service: where every object's events go. */
  LOGS: LogsBinding;
  TENERO_URL: string;
  HIRO_URL: string;
  /** Sent as `x-api-key` when set (a secret): without it Tenero's budget is per egress IP. */
  TENERO_API_KEY?: string;
  /** The always-priced tokens, comma-separated; the agents' swaps add the rest. */
  BASE_TOKENS: string;
  /** The competition's agents' addresses, comma-separated: the sweep records their swaps only. */
  COMPETITION_AGENTS: string;
  /** `Authorization: Bearer <ADMIN_TOKEN>` for the ops routes (a secret). */
  ADMIN_TOKEN: string;
}

/** A comma-separated variable as a list, blanks dropped. */
export const list = (value: string | undefined): string[] => (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);

/** `LOG_LEVEL`, checked by the object's configuration (an unknown level is refused with the choices). */
export const logLevel = (env: Env): LogLevel => (env.LOG_LEVEL ?? "info") as LogLevel;
