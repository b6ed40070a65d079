import { nextDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import type { OutboundBudget } from "../core/budget.js";
import { MAX_DURATION_MS } from "../core/bounds.js";
import { InvalidInputError, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { callWithTimeout } from "../core/timeout.js";
import { SPAN_KIND, inSpan, messagingAttributes, type TracerLike } from "../core/tracing.js";
import { EmptyStateError } from "./errors.js";
import { isEmptyState, type FanoutConfig, type FanoutTarget } from "./options.js";
import { DEFAULT_RECONCILE_MS, parseReconcilePlan, type ReconcilePlanMs } from "./reconcile.js";
import { checkTargets, type ResolvedTarget } from "./targets.js";
import type { FanoutRow, FanoutStore, TargetResult } from "./store.js";

export interface FanoutPass {
  pushed: number;
  failed: number;
  /** True when the budget ran out before every target behind was pushed. */
  carried: boolean;
  nextAt: number | null;
}

export interface FanoutTargetStatus {
  id: string;
  group: string;
  /** The state version the target acknowledged last (0: never). */
  version: number;
  behind: boolean;
  failures: number;
  lastError: string | null;
  pushedAt: number | null;
}

export interface FanoutStatus {
  name: string;
  version: number;
  nextAt: number | null;
  nextReason: FanoutRow["nextReason"];
  consecutiveFailures: number;
  lastError: string | null;
  lastPushAt: number | null;
  lastSuccessAt: number | null;
  /** Every target has acknowledged the current version. */
  converged: boolean;
  targets: FanoutTargetStatus[];
}

export interface FanoutDeps {
  store: FanoutStore;
  clock: Clock;
  logger: Logger;
  wake: () => void;
  /** Whether a periodic task of this name is defined, for a chooser's `{ after }` plan; unchecked without it. */
  knowsTask?: (task: string) => boolean;
  /** Each push gets a span, when the engine traces. */
  tracer?: TracerLike;
}

/**
 * Configuration fan-out: one state, pushed to groups of targets, each group with its own projection;
 * all targets in parallel with `Promise.allSettled`, so one failing target never blocks the rest. The state, its version and what each target acknowledged are in the store,
 * so a retry goes only to the targets behind and survives a restart; the failure counter too (in
 * memory it would reset on a restart and only reconciliation would catch up; stored, it costs
 * nothing and keeps the backoff honest across restarts).
 */
export class Fanout<S = unknown> {
  private ensured = false;
  /**
   * A round this process carried over (the budget ran out): the targets it pushed so far and their
   * results, so the next pass goes on with the others rather than starting over with the same first
   * ones (a reconciliation, or targets that keep failing, would never get past them). In memory: if
   * it is lost, the round starts over, which only repeats idempotent pushes.
   */
  private carry: { version: number; at: number; done: Set<string>; results: TargetResult[] } | null = null;

  constructor(
    readonly config: FanoutConfig,
    private readonly deps: FanoutDeps,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** Whether its reconciliation may follow a periodic task (`{ after }`, or a chooser that may answer one). */
  get followsTasks(): boolean {
    return typeof this.config.reconcile === "function" || this.followedTask !== null;
  }

  /** The task a `reconcile: { after }` option follows, or null (an interval, never, or a chooser). */
  get followedTask(): string | null {
    const option = this.config.reconcile;
    return typeof option === "object" && option ? option.after : null;
  }

  /**
   * Saves `state` as the new version and schedules a push to every target at once (the next tick;
   * immediately when the engine runs continuously). An empty state is refused before anything is
   * written or sent. Pushing the same state again changes nothing.
   */
  async push(state: S): Promise<{ version: number; changed: boolean }> {
    const text = this.serialise(state);
    await this.ensure();
    const saved = await this.deps.store.saveState({ name: this.name, state: text, now: this.deps.clock.now() });
    if (saved.changed) {
      this.deps.logger.info("fanout.state_changed", { fanout: this.name, version: saved.version });
      this.deps.wake();
    }
    return saved;
  }

  /** @internal one round, if due: the targets behind (all of them on a reconciliation), within the budget. */
  async pass(budget: OutboundBudget): Promise<FanoutPass> {
    const { store, clock, logger } = this.deps;
    await this.ensure();
    const now = clock.now();
    const round = await store.claimDue({ name: this.name, now, leaseUntil: now + this.config.timeout * 2 + 10_000 });
    if (!round) return { pushed: 0, failed: 0, carried: false, nextAt: (await store.get({ name: this.name }))?.nextAt ?? null };

    let { version, state: text } = round;
    // The wake-up this round answers; finishing replaces it only if it is still the stored one.
    let claimed = { at: round.nextAt, reason: round.nextReason };
    try {
      if (this.config.state) {
        const fresh = this.serialise((await this.config.state()) as S);
        if (fresh !== text) {
          ({ version } = await store.saveState({ name: this.name, state: (text = fresh), now }));
          // Saving a new version made this round's wake-up "push, now": it is this round's own.
          claimed = { at: now, reason: "push" };
        }
      }
    } catch (error) {
      // An empty or unreadable state is a failed round: nothing is sent, and it is retried on the backoff.
      return this.endRound(round.version, round, claimed, [], messageOf(error), now, false);
    }
    if (text === null) {
      const stored = await store.finish({ name: this.name, roundVersion: round.version, claimed, consecutiveFailures: 0, lastError: null, nextAt: null, nextReason: null, pushed: false, succeeded: false, now });
      return { pushed: 0, failed: 0, carried: false, nextAt: stored.nextAt };
    }
    let targets: ResolvedTarget<FanoutTarget>[];
    try {
      targets = await this.resolveTargets();
    } catch (error) {
      // Targets that cannot be read, or an id no store can hold: nothing is sent, retried on the backoff.
      return this.endRound(version, round, claimed, [], messageOf(error), now, false);
    }
    const state = JSON.parse(text) as S;
    const known = new Map((await store.loadTargets({ fanout: this.name })).map((t) => [t.target, t]));
    const everyone = round.nextReason === "reconcile";
    // The next pass of a carried round (same version, woken by the carried pass's own wake-up) goes on with it.
    const carry = this.carry?.version === version && this.carry.at === round.nextAt ? this.carry : { version, at: now, done: new Set<string>(), results: [] };
    this.carry = null;
    // Behind, or its last push failed: a target that had the version but failed a reconciliation
    // push may have lost it (the case reconciliation is for), so the retry goes to it too.
    const due = targets.filter((t) => !carry.done.has(t.id) && (everyone || (known.get(t.id)?.version ?? 0) < version || (known.get(t.id)?.failures ?? 0) > 0));
    const granted = budget.take(due.length);
    const batch = due.slice(0, granted);
    const payloads = new Map<string, unknown>();
    for (const [group, def] of Object.entries(this.config.groups)) payloads.set(group, def.project ? def.project(state) : state);
    const push = (t: ResolvedTarget<FanoutTarget>) =>
      callWithTimeout(clock, this.config.timeout, (signal) => this.config.send(t.target, payloads.get(t.group), { group: t.group, version, signal, now: clock.now(), logger }));
    const { tracer } = this.deps;
    const outcomes = await Promise.allSettled(batch.map((t) => (tracer ? this.tracedPush(tracer, t, version, everyone, push) : push(t))));
    const results: TargetResult[] = batch.map((t, i) => ({
      target: t.id,
      group: t.group,
      version,
      error: outcomes[i]!.status === "fulfilled" ? null : errorText((outcomes[i] as PromiseRejectedResult).reason),
    }));
    await store.recordTargets({ fanout: this.name, results, now: clock.now() });
    const failed = results.filter((r) => r.error !== null);
    for (const r of failed) logger.warn("fanout.push_failed", { fanout: this.name, target: r.target, group: r.group, version, error: r.error });
    if (batch.length < due.length) {
      // Carried over: the rest of this round goes out on the next tick; the round stays due.
      this.carry = { version, at: now, done: new Set([...carry.done, ...batch.map((t) => t.id)]), results: [...carry.results, ...results] };
      const stored = await store.finish({ name: this.name, roundVersion: version, claimed, consecutiveFailures: round.consecutiveFailures, lastError: failed[0]?.error ?? round.lastError, nextAt: now, nextReason: round.nextReason, pushed: batch.length > 0, succeeded: false, now });
      return { pushed: batch.length - failed.length, failed: failed.length, carried: true, nextAt: stored.nextAt };
    }
    const all = [...carry.results, ...results];
    const failures = all.filter((r) => r.error !== null);
    const error = failures.length ? `${failures.length} of ${all.length} push${all.length === 1 ? "" : "es"} failed; first: ${failures[0]!.target}: ${failures[0]!.error}` : null;
    return this.endRound(version, round, claimed, all, error, now, batch.length > 0);
  }

  /**
   * A push to one target in a `push <fanout>` span (the messaging conventions' send, a producer span)
   * of a trace of its own, failed when the push throws or times out.
   */
  private tracedPush(tracer: TracerLike, target: ResolvedTarget<FanoutTarget>, version: number, reconcile: boolean, push: (t: ResolvedTarget<FanoutTarget>) => Promise<unknown>): Promise<unknown> {
    const attributes = {
      ...messagingAttributes("send", "push", this.name),
      "tickwork.fanout.target": target.id,
      "tickwork.fanout.group": target.group,
      "tickwork.fanout.version": version,
      "tickwork.fanout.reconcile": reconcile,
    };
    return inSpan(tracer, `push ${this.name}`, { kind: SPAN_KIND.PRODUCER, root: true, attributes }, () => push(target));
  }

  /**
   * @internal a run of the periodic task `task` has finished (on this process). A reconciliation that
   * follows that task is due now; a chooser is asked again, so one that no longer follows a task gets
   * its interval back (the fan-out had no wake-up of its own while it followed one).
   */
  async afterTask(task: string): Promise<void> {
    const option = this.config.reconcile;
    if (typeof option !== "function" && !(typeof option === "object" && option && option.after === task)) return;
    const { store, clock, logger } = this.deps;
    await this.ensure();
    const now = clock.now();
    const plan = await this.plan(now);
    if (typeof plan === "object" && plan) {
      if (plan.after !== task) return;
      // Only the wake-up moves: a round in flight keeps its lease, and its end keeps this wake-up.
      await store.scheduleRound({ name: this.name, at: now, reason: "reconcile" });
      logger.debug("fanout.reconcile_after_task", { fanout: this.name, task });
      this.deps.wake();
    } else if (plan !== false) {
      await store.scheduleRound({ name: this.name, at: now + plan, reason: "reconcile", ifNone: true });
    }
  }

  async status(): Promise<FanoutStatus> {
    await this.ensure();
    const row = await this.deps.store.get({ name: this.name });
    const acked = new Map((await this.deps.store.loadTargets({ fanout: this.name })).map((t) => [t.target, t]));
    const version = row?.version ?? 0;
    const targets = (await this.resolveTargets()).map((t): FanoutTargetStatus => {
      const a = acked.get(t.id);
      return { id: t.id, group: t.group, version: a?.version ?? 0, behind: (a?.version ?? 0) < version, failures: a?.failures ?? 0, lastError: a?.lastError ?? null, pushedAt: a?.pushedAt ?? null };
    });
    return {
      name: this.name,
      version,
      nextAt: row?.nextAt ?? null,
      nextReason: row?.nextReason ?? null,
      consecutiveFailures: row?.consecutiveFailures ?? 0,
      lastError: row?.lastError ?? null,
      lastPushAt: row?.lastPushAt ?? null,
      lastSuccessAt: row?.lastSuccessAt ?? null,
      // A target whose last push failed (a reconciliation it missed) has a retry due: not converged yet.
      converged: version > 0 && targets.every((t) => !t.behind && t.failures === 0),
      targets,
    };
  }

  /** Schedules a reconciliation (every target, current state) now. */
  async reconcileNow(): Promise<void> {
    await this.ensure();
    // Only the wake-up moves: a round another process holds keeps its lease and finishes as it would.
    await this.deps.store.scheduleRound({ name: this.name, at: this.deps.clock.now(), reason: "reconcile" });
    this.deps.wake();
  }

  private async endRound(
    roundVersion: number,
    round: FanoutRow,
    claimed: { at: number | null; reason: FanoutRow["nextReason"] },
    results: TargetResult[],
    error: string | null,
    now: number,
    pushed: boolean,
  ): Promise<FanoutPass> {
    const { store, logger } = this.deps;
    const failed = results.filter((r) => r.error !== null).length;
    const plan = await this.plan(now);
    // A plan that follows a task has no reconciliation of its own: the task's run brings it.
    const reconcileAt = typeof plan === "number" ? now + plan : null;
    if (error === null) {
      const stored = await store.finish({ name: this.name, roundVersion, claimed, consecutiveFailures: 0, lastError: null, nextAt: reconcileAt, nextReason: reconcileAt === null ? null : "reconcile", pushed, succeeded: true, now });
      logger.info(round.nextReason === "reconcile" ? "fanout.reconciled" : "fanout.converged", { fanout: this.name, version: roundVersion, pushed: results.length });
      return { pushed: results.length, failed: 0, carried: false, nextAt: stored.nextAt };
    }
    const failures = round.consecutiveFailures + 1;
    const retryAt = now + this.backoff(failures);
    // A retry never replaces a sooner wake-up, so repeated failures cannot push it back (alarm churn):
    // a reconciliation due first stays first.
    const nextAt = reconcileAt !== null && reconcileAt < retryAt ? reconcileAt : retryAt;
    const nextReason = nextAt === retryAt ? "retry" : "reconcile";
    const stored = await store.finish({ name: this.name, roundVersion, claimed, consecutiveFailures: failures, lastError: error, nextAt, nextReason, pushed, succeeded: false, now });
    logger.warn("fanout.retry_scheduled", { fanout: this.name, version: roundVersion, failed, consecutiveFailures: failures, retryAt: nextAt, error });
    return { pushed: results.length - failed, failed, carried: false, nextAt: stored.nextAt };
  }

  /**
   * The reconciliation plan now: the option as given, or the chooser's answer. A chooser that throws
   * or answers no plan is logged, and 15 minutes stands in, so the safety net never goes away.
   */
  private async plan(now: number): Promise<ReconcilePlanMs> {
    const option = this.config.reconcile;
    if (typeof option !== "function") return option;
    try {
      const plan = parseReconcilePlan(await option({ fanout: this.name, now }));
      if (typeof plan === "object" && plan && this.deps.knowsTask && !this.deps.knowsTask(plan.after)) {
        throw new InvalidInputError(`{ after: ${JSON.stringify(plan.after)} }: there is no task named ${JSON.stringify(plan.after)}`);
      }
      return plan;
    } catch (error) {
      this.deps.logger.error("fanout.reconcile_plan_failed", { fanout: this.name, error: errorText(error), instead: `reconcile in ${DEFAULT_RECONCILE_MS} ms` });
      return DEFAULT_RECONCILE_MS;
    }
  }

  private backoff(failures: number): number {
    // A policy that ends (schedule's last step passed) keeps its last step: fan-out never gives up,
    // the next reconciliation would re-push anyway. A delay past the bound on durations is held to
    // it, so the wake-up stays a time the store can hold.
    for (let n = failures; n >= 1; n--) {
      const delay = nextDelay(this.config.backoff, n);
      if (delay !== null) return Math.min(delay, MAX_DURATION_MS);
    }
    return 0;
  }

  private async resolveTargets(): Promise<ResolvedTarget<FanoutTarget>[]> {
    const groups: { group: string; targets: readonly FanoutTarget[] }[] = [];
    for (const [group, def] of Object.entries(this.config.groups)) {
      groups.push({ group, targets: typeof def.targets === "function" ? await def.targets() : def.targets });
    }
    return checkTargets(`fanout "${this.name}"`, groups);
  }

  private serialise(state: S): string {
    const isEmpty = this.config.isEmpty ?? isEmptyState;
    if (isEmpty(state)) throw new EmptyStateError(`fanout "${this.name}"`);
    return serialiseJson(state, { where: `fanout "${this.name}"`, subject: "state" });
  }

  private async ensure(): Promise<void> {
    if (this.ensured) return;
    // With a state source there is something to push from the start: the first round reconciles.
    await this.deps.store.ensure({ name: this.name, now: this.deps.clock.now(), reconcileNow: this.config.state !== undefined });
    this.ensured = true;
  }
}

/** A round's error as its status shows it: the message alone, no stack. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : errorText(error);
}
