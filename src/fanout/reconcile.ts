import { checkText } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, describe } from "../core/errors.js";

/**
 * When a fan-out next re-pushes its current state to every target (its reconciliation, the safety
 * net for a network blip, a receiver that lost its state, retries that gave up):
 * - a duration (`"15m"`, the default): that long after each round;
 * - `false`: never;
 * - `{ after: "crawl" }`: right after each run of the periodic task `crawl` (`tw.task`), whatever its
 *   outcome, and never on an interval of its own. A reconciliation that rides on a task the system
 *   runs anyway (a crawler's hourly run, say) costs no wake-up of its own.
 */
export type ReconcilePlan = Duration | false | { after: string };

/** What a `ReconcileChooser` is told. */
export interface ReconcileContext {
  fanout: string;
  /** The engine clock's time, epoch ms. */
  now: number;
}

/**
 * Chooses the plan each time it matters: at the end of every round, and after every run of a
 * periodic task (so a plan that follows a task switches back to an interval at the task's next run).
 * For example, reconcile after each crawl while the crawler is enabled, every 15 minutes otherwise:
 *
 * ```ts
 * reconcile: async () => ((await crawler.enabled()) ? { after: "crawl" } : "15m")
 * ```
 *
 * Call `fanout.reconcileNow()` where the deciding setting changes, for the new plan to take effect
 * at once. A chooser that throws or answers something that is not a plan (or names no task) is
 * logged as `fanout.reconcile_plan_failed`, and the fan-out reconciles in 15 minutes meanwhile: a
 * broken setting never switches the safety net off.
 */
export type ReconcileChooser = (ctx: ReconcileContext) => ReconcilePlan | Promise<ReconcilePlan>;

/** What the `reconcile` option takes. */
export type ReconcileOption = ReconcilePlan | ReconcileChooser;

/** A plan, parsed: milliseconds, `false`, or the task to follow. */
export type ReconcilePlanMs = number | false | { after: string };

export const DEFAULT_RECONCILE_MS = 900_000;

/** Task names are at most 128 characters (`tw.task`). */
const MAX_TASK_NAME = 128;

/** Parses a plan; throws `InvalidInputError` naming what is wrong with it. */
export function parseReconcilePlan(value: unknown): ReconcilePlanMs {
  if (value === false) return false;
  if (typeof value === "number" || typeof value === "string") return toMs(value);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "after") return { after: checkText((value as { after: unknown }).after, "{ after }: the task name", { max: MAX_TASK_NAME }) };
  }
  throw new InvalidInputError(`expected a duration such as "15m", false, { after: "task" } or a function (ctx) => one of those, got ${describe(value)}`);
}
