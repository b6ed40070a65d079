import { nextDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import type { OutboundBudget } from "../core/budget.js";
import { InvalidInputError, describe, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { callWithTimeout } from "../core/timeout.js";
import { EmptyStateError } from "./errors.js";
import { isEmptyState, type FanoutConfig, type FanoutTarget } from "./options.js";
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
}

interface Resolved {
  id: string;
  group: string;
  target: FanoutTarget;
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
    try {
      if (this.config.state) {
        const fresh = this.serialise((await this.config.state()) as S);
        if (fresh !== text) ({ version } = await store.saveState({ name: this.name, state: (text = fresh), now }));
      }
    } catch (error) {
      // An empty or unreadable state is a failed round: nothing is sent, and it is retried on the backoff.
      return this.endRound(round.version, round, [], error instanceof Error ? error.message : errorText(error), now, false);
    }
    if (text === null) {
      await store.finish({ name: this.name, roundVersion: round.version, consecutiveFailures: 0, lastError: null, nextAt: null, nextReason: null, pushed: false, succeeded: false, now });
      return { pushed: 0, failed: 0, carried: false, nextAt: null };
    }
    const state = JSON.parse(text) as S;
    const targets = await this.resolveTargets();
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
    const outcomes = await Promise.allSettled(
      batch.map((t) =>
        callWithTimeout(clock, this.config.timeout, (signal) => this.config.send(t.target, payloads.get(t.group), { group: t.group, version, signal, now: clock.now(), logger })),
      ),
    );
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
      await store.finish({ name: this.name, roundVersion: version, consecutiveFailures: round.consecutiveFailures, lastError: failed[0]?.error ?? round.lastError, nextAt: now, nextReason: round.nextReason, pushed: batch.length > 0, succeeded: false, now });
      return { pushed: batch.length - failed.length, failed: failed.length, carried: true, nextAt: now };
    }
    const all = [...carry.results, ...results];
    const failures = all.filter((r) => r.error !== null);
    const error = failures.length ? `${failures.length} of ${all.length} pushes failed; first: ${failures[0]!.target}: ${failures[0]!.error}` : null;
    return this.endRound(version, round, all, error, now, batch.length > 0);
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

  private async endRound(roundVersion: number, round: FanoutRow, results: TargetResult[], error: string | null, now: number, pushed: boolean): Promise<FanoutPass> {
    const { store, logger } = this.deps;
    const failed = results.filter((r) => r.error !== null).length;
    const reconcileAt = this.config.reconcile === false ? null : now + this.config.reconcile;
    if (error === null) {
      await store.finish({ name: this.name, roundVersion, consecutiveFailures: 0, lastError: null, nextAt: reconcileAt, nextReason: reconcileAt === null ? null : "reconcile", pushed, succeeded: true, now });
      logger.info(round.nextReason === "reconcile" ? "fanout.reconciled" : "fanout.converged", { fanout: this.name, version: roundVersion, pushed: results.length });
      return { pushed: results.length, failed: 0, carried: false, nextAt: reconcileAt };
    }
    const failures = round.consecutiveFailures + 1;
    const retryAt = now + this.backoff(failures);
    // A retry never replaces a sooner wake-up, so repeated failures cannot push it back (alarm churn):
    // a reconciliation due first stays first.
    const nextAt = reconcileAt !== null && reconcileAt < retryAt ? reconcileAt : retryAt;
    const nextReason = nextAt === retryAt ? "retry" : "reconcile";
    await store.finish({ name: this.name, roundVersion, consecutiveFailures: failures, lastError: error, nextAt, nextReason, pushed, succeeded: false, now });
    logger.warn("fanout.retry_scheduled", { fanout: this.name, version: roundVersion, failed, consecutiveFailures: failures, retryAt: nextAt, error });
    return { pushed: results.length - failed, failed, carried: false, nextAt };
  }

  private backoff(failures: number): number {
    // A policy that ends (schedule's last step passed) keeps its last step: fan-out never gives up,
    // the next reconciliation would re-push anyway.
    for (let n = failures; n >= 1; n--) {
      const delay = nextDelay(this.config.backoff, n);
      if (delay !== null) return delay;
    }
    return 0;
  }

  private async resolveTargets(): Promise<Resolved[]> {
    const out: Resolved[] = [];
    const seen = new Set<string>();
    for (const [group, def] of Object.entries(this.config.groups)) {
      const list = typeof def.targets === "function" ? await def.targets() : def.targets;
      for (const target of list) {
        const id = typeof target === "string" ? target : target && typeof target === "object" && typeof target.id === "string" ? target.id : undefined;
        if (!id) throw new InvalidInputError(`fanout "${this.name}": group "${group}" has a target that is neither a string nor { id: string }: ${describe(target)}`);
        if (seen.has(id)) throw new InvalidInputError(`fanout "${this.name}": target id "${id}" appears twice; ids must be unique across groups`);
        seen.add(id);
        out.push({ id, group, target });
      }
    }
    return out;
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
