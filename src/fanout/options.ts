import { z } from "zod";
import { schedule, type Backoff } from "../core/backoff.js";
import type { Logger } from "../core/logger.js";
import { durationMs, fn, parseOptions } from "../core/options.js";

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
     * How often the current state is re-pushed to every target as a safety net (for a network blip, a
     * receiver that lost its state, retries that gave up); `false` never. Default 15m.
     */
    reconcile: z.union([durationMs, z.literal(false)], { error: 'expected a duration such as "15m", or false' }).default(900_000),
    /** Reads the current state for retries and reconciliation (e.g. the enabled symbols, from their table); default the last pushed state. */
    state: fn<() => unknown>("a function () => state").optional(),
    /** Which states are refused as empty; default null, [] and {}. */
    isEmpty: fn<(state: unknown) => boolean>("a function (state) => boolean").optional(),
    /** A push that has not answered after this long fails; default 30s. */
    timeout: durationMs.default(30_000),
  })
  .strict();

export type FanoutOptions<S, G extends FanoutTarget = FanoutTarget> = Omit<z.input<typeof fanoutOptionsSchema>, "groups" | "send" | "state" | "isEmpty"> & {
  groups: Record<string, FanoutGroup<S, G>>;
  send: PushSend<G>;
  state?: () => S | Promise<S>;
  isEmpty?: (state: S) => boolean;
};

export type FanoutConfig = z.output<typeof fanoutOptionsSchema> & { name: string };

export function parseFanoutOptions(name: string, options: unknown): FanoutConfig {
  return { name, ...parseOptions(fanoutOptionsSchema, options, `fanout "${name}"`) };
}

/** null, undefined, an empty array, an empty object. */
export function isEmptyState(state: unknown): boolean {
  if (state === null || state === undefined) return true;
  if (Array.isArray(state)) return state.length === 0;
  if (typeof state === "object") return Object.keys(state).length === 0;
  return false;
}
