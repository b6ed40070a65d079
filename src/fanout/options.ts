import * as z from "zod";
import { schedule, type Backoff } from "../core/backoff.js";
import type { Logger } from "../core/logger.js";
import { INT32_MAX, checkText } from "../core/bounds.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import { DEFAULT_RECONCILE_MS, parseReconcilePlan, type ReconcileChooser, type ReconcileOption, type ReconcilePlanMs } from "./reconcile.js";
import { checkTargets } from "./targets.js";

/** A target: a string id, or an object with one (e.g. `{ id: "alert-eu-3", url }`). */
export type FanoutTarget = string | { readonly id: string };

export interface FanoutGroup<S, G extends FanoutTarget = FanoutTarget> {
  /** The group's targets, or a function returning them (read at each round). */
  targets: readonly G[] | (() => readonly G[] | Promise<readonly G[]>);
  /**
   * This group's view of the state, so each group gets only what it uses (full symbol metadata for
   * price collectors, the bare symbol names for alert checkers). Default: the state.
   */
  project?: (state: S) => unknown;
}

export interface PushContext {
  group: string;
  /** The state version being pushed; receivers may ignore older ones. */
  version: number;
  /** Aborted when the push's timeout passes. */
  signal: AbortSignal;
  now: number;
  logger: Logger;
}

export type PushSend<G extends FanoutTarget = FanoutTarget> = (target: G, payload: unknown, ctx: PushContext) => unknown;

/**
 * The default retry steps: 30s, 1m, 2m, 5m, 15m, and 15m from then on. A blip is retried within
 * seconds; a long outage is retried every 15 minutes, never further apart, since a fan-out never gives up.
 */
export const DEFAULT_BACKOFF = ["30s", "1m", "2m", "5m", "15m"] as const;

const fanoutOptionsSchema = z
  .object({
    groups: z.record(
      z.string().min(1),
      z.object({ targets: z.custom<FanoutGroup<unknown>["targets"]>((v) => Array.isArray(v) || typeof v === "function", "expected an array of targets or a function returning one"), project: fn<(state: unknown) => unknown>("a function (state) => payload").optional() }).strict(),
    ).refine((groups) => Object.keys(groups).length > 0, "at least one group is needed"),
    send: fn<PushSend>("a function (target, payload, ctx) => Promise"),
    /** Delay before a retry after a failed round; a policy that ends keeps its last step (the default's is 15m). */
    backoff: fn<Backoff>("a backoff: schedule([...]), exponential({...}) or (failures) => ms").default(() => schedule([...DEFAULT_BACKOFF])),
    /**
     * When the current state is re-pushed to every target as a safety net (for a network blip, a
     * receiver that lost its state, retries that gave up). Default 15m. See `ReconcileOption`.
     */
    reconcile: z
      .unknown()
      .transform((value, ctx) => {
        try {
          return typeof value === "function" ? (value as ReconcileChooser) : parseReconcilePlan(value);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      })
      .default(DEFAULT_RECONCILE_MS),
    /** Reads the current state for retries and reconciliation (e.g. the enabled symbols, from their table); default the last pushed state. */
    state: fn<() => unknown>("a function () => state").optional(),
    /** Which states are refused as empty; default null, [] and {}. */
    isEmpty: fn<(state: unknown) => boolean>("a function (state) => boolean").optional(),
    /** A push that has not answered after this long fails; default 30s. */
    timeout: durationMs.refine((ms) => ms >= 1 && ms <= INT32_MAX, `a push timeout must be from 1 ms to ${INT32_MAX} ms (the longest a timer waits)`).default(30_000),
  })
  .strict();

export type FanoutOptions<S, G extends FanoutTarget = FanoutTarget> = Omit<z.input<typeof fanoutOptionsSchema>, "groups" | "send" | "state" | "isEmpty" | "reconcile"> & {
  groups: Record<string, FanoutGroup<S, G>>;
  send: PushSend<G>;
  state?: () => S | Promise<S>;
  isEmpty?: (state: S) => boolean;
  reconcile?: ReconcileOption;
};

export type FanoutConfig = Omit<z.output<typeof fanoutOptionsSchema>, "reconcile"> & { name: string; reconcile: ReconcilePlanMs | ReconcileChooser };

/** Fan-out names are stored and indexed with every target id: short, no NUL, well-formed. */
export const MAX_NAME_LENGTH = 100;

export function parseFanoutOptions(name: string, options: unknown): FanoutConfig {
  checkText(name, "fanout name", { max: MAX_NAME_LENGTH });
  const where = `fanout "${name}"`;
  const config = { name, ...parseOptions(fanoutOptionsSchema, options, where) } as FanoutConfig;
  // Group names and the targets given as arrays are checked now, before anything is written; a
  // function's targets are checked at each round (a bad one fails that round).
  for (const group of Object.keys(config.groups)) {
    // A name too long to quote is shown by checkText's own preview of the value.
    checkText(group, group.length <= 200 ? `${where}: group name ${JSON.stringify(group)}` : `${where}: a group name`, { max: MAX_NAME_LENGTH });
  }
  checkTargets(
    where,
    Object.entries(config.groups).flatMap(([group, def]) => (Array.isArray(def.targets) ? [{ group, targets: def.targets as readonly unknown[] }] : [])),
  );
  return config;
}

/** null, undefined, an empty array, an empty object. */
export function isEmptyState(state: unknown): boolean {
  if (state === null || state === undefined) return true;
  if (Array.isArray(state)) return state.length === 0;
  if (typeof state === "object") return Object.keys(state).length === 0;
  return false;
}
