import * as z from "zod";
import type { TickworkOptions } from "../../tickwork.js";
import { InvalidInputError } from "../../core/errors.js";
import type { LogLevel, LoggerOption } from "../../core/logger.js";
import { durationMs, parseOptions } from "../../core/options.js";

/**
 * Subrequests one invocation may make on Workers Paid (Cloudflare's Workers limits page: 1,000 per
 * request; 50 on Workers Free). Every `alarm()` and every RPC call into the object is an invocation
 * of its own, so each tick has the whole allowance.
 */
export const WORKERS_PAID_SUBREQUESTS = 1_000;
/** Calls a tick makes outside its delivery and fan-out budget: a task's own fetches, KV writes, the batched log calls. */
export const DEFAULT_HEADROOM = 100;
/** The platform retries a throwing `alarm()` up to 6 times, from 2 s with exponential backoff (Durable Objects' alarms docs). */
export const PLATFORM_ALARM_RETRIES = 6;

/** Events to a Workers RPC logging binding (such as `env.LOGS`, the worker-logs service), named by its binding. */
export interface LogsBindingChoice {
  binding: string;
  appId: string;
}

/**
 * Where the object's events go: a logging binding, `"console"` (Workers Logs and `wrangler tail`),
 * or any sink the engine accepts. Required, with no default: a logger that silently defaulted to the
 * console is how a Worker's failures go unseen (they never reach the logging service anyone reads),
 * so the choice is always written down.
 */
export type LoggerChoice = LogsBindingChoice | "console" | LoggerOption;

/** Engine options a Durable Object may set; the rest (store, clock, logger, budget) come from the object. */
export type ObjectEngineOptions = Pick<TickworkOptions, "instanceId" | "retention" | "idempotency" | "onError" | "tracer">;

export interface TickworkObjectConfig {
  logger: LoggerChoice;
  /** Default "info". */
  logLevel?: LogLevel;
  /** Where `tw.cache` lives: the object's own SQLite (default) or a KV namespace binding (`{ kv: "PRICES" }`). */
  cache?: "store" | { kv: string; prefix?: string; expireAfter?: string | number };
  /** The alarm's cadence: `carriedOver` (100 ms) while work is carried over, `ceiling` (5 min) at most. */
  cadence?: { carriedOver?: string | number; ceiling?: string | number };
  /** The platform's subrequest limit per invocation; default 1,000 (Workers Paid). */
  subrequests?: number;
  /** Subrequests kept out of the tick budget for the tick's other calls; default 100. */
  headroom?: number;
  /** Outbound calls per tick for deliveries and fan-outs; default `subrequests - headroom` (900). */
  tickBudget?: number;
  /** Jobs run per tick at most; default the tick budget (a job usually makes a call). */
  maxJobsPerTick?: number;
  /** An alarm this far in the past is stuck and re-armed by the next RPC call; default 5 min (beyond the platform's retries). */
  watchdog?: { stuckAfter?: string | number };
  /** Retries the platform makes of a throwing alarm (6); on the last one the object re-arms instead of throwing. */
  alarmRetries?: number;
  engine?: ObjectEngineOptions;
}

const LOGGER_EXPECTED = 'expected { binding: "LOGS", appId: "my-app" }, "console", or a sink (a function, a pino instance, jsonLines())';

function isLoggerChoice(v: unknown): v is LoggerChoice {
  if (v === "console" || typeof v === "function") return true;
  if (typeof v !== "object" || v === null) return false;
  if ("binding" in v || "appId" in v) {
    const { binding, appId, ...rest } = v as Record<string, unknown>;
    return typeof binding === "string" && binding !== "" && typeof appId === "string" && appId !== "" && Object.keys(rest).length === 0;
  }
  return true;
}

const schema = z
  .object({
    logger: z.custom<LoggerChoice>(isLoggerChoice, LOGGER_EXPECTED),
    logLevel: z.enum(["debug", "info", "warn", "error", "critical"]).default("info"),
    cache: z
      .union([z.literal("store"), z.object({ kv: z.string().min(1), prefix: z.string().optional(), expireAfter: durationMs.optional() }).strict()])
      .default("store"),
    cadence: z.object({ carriedOver: durationMs.default(100), ceiling: durationMs.default(300_000) }).strict().default({ carriedOver: 100, ceiling: 300_000 }),
    subrequests: z.number().int().min(1).default(WORKERS_PAID_SUBREQUESTS),
    headroom: z.number().int().min(0).default(DEFAULT_HEADROOM),
    tickBudget: z.number().int().min(1).optional(),
    maxJobsPerTick: z.number().int().min(1).optional(),
    watchdog: z.object({ stuckAfter: durationMs.default(300_000) }).strict().default({ stuckAfter: 300_000 }),
    alarmRetries: z.number().int().min(0).default(PLATFORM_ALARM_RETRIES),
    engine: z.custom<ObjectEngineOptions>((v) => typeof v === "object" && v !== null, "engine options { instanceId?, retention?, idempotency?, onError?, tracer? }").optional(),
  })
  .strict();

export type ObjectConfig = Omit<z.output<typeof schema>, "tickBudget" | "maxJobsPerTick"> & {
  tickBudget: number;
  maxJobsPerTick: number;
};

export function parseObjectConfig(config: TickworkObjectConfig, where: string): ObjectConfig {
  const o = parseOptions(schema, config, where);
  const tickBudget = o.tickBudget ?? o.subrequests - o.headroom;
  if (tickBudget < 1) {
    throw new InvalidInputError(`${where}: headroom (${o.headroom}) leaves no tick budget out of ${o.subrequests} subrequests; lower headroom or set tickBudget`);
  }
  if (tickBudget > o.subrequests) throw new InvalidInputError(`${where}: tickBudget (${tickBudget}) exceeds the ${o.subrequests} subrequests an invocation may make`);
  return { ...o, tickBudget, maxJobsPerTick: o.maxJobsPerTick ?? tickBudget };
}
