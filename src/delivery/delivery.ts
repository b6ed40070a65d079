import { nextDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import type { OutboundBudget } from "../core/budget.js";
import { InvalidInputError, describe, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { MAX_DURATION_MS, MAX_INDEXED_TEXT, checkText } from "../core/bounds.js";
import { toInstant } from "../core/time.js";
import { callWithTimeout } from "../core/timeout.js";
import { SPAN_KIND, inSpan, messagingAttributes, type TraceAttributes, type TracerLike } from "../core/tracing.js";
import type { DeliveryConfig, DeliveryItem, DeliveryMessage } from "./options.js";
import type { DeliveryCounts, DeliveryOutcomes, DeliveryRow, DeliveryStore } from "./store.js";

export interface EmitResult {
  /** Items written to the outbox. */
  emitted: number;
  /** Keys skipped because an outstanding item (a send or a pending retry) already holds them. */
  skipped: string[];
}

export interface EmitFromResult extends EmitResult {
  /** False when the precondition said the data is not complete yet: nothing was read or emitted. */
  ready: boolean;
}

/** What one tick's pass of a delivery did. */
export interface DeliveryPass {
  sent: number;
  delivered: number;
  failed: number;
  dropped: number;
  /** True when the budget ran out with items still due: the engine comes back in 100 ms. */
  carried: boolean;
  /** When the delivery next has something due (a retry, a lapsed lease), or null. */
  nextAt: number | null;
}

export interface DeliveryStatus extends DeliveryCounts {
  name: string;
  budget: number;
  retryBatch: number;
  lastPass: (DeliveryPass & { at: number }) | null;
}

export interface DeliveryDeps {
  store: DeliveryStore;
  clock: Clock;
  logger: Logger;
  wake: () => void;
  /** Each send gets a span, when the engine traces. */
  tracer?: TracerLike;
}

/** Delivery ids are UUIDs (36 characters); anything this long is no id of ours. */
export const MAX_ID_LENGTH = 100;
/** Dead letters deleted per statement by a purge of everything dropped before a time. */
const PURGE_BATCH = 1_000;

/**
 * Deletes every dead letter of `delivery` dropped before `before`, a batch at a time until one comes
 * back short; returns the ids deleted. The engine's upkeep and the command line both purge this way.
 */
export async function purgeDroppedBefore(store: DeliveryStore, delivery: string, before: number): Promise<string[]> {
  const purged: string[] = [];
  for (let n = PURGE_BATCH; n === PURGE_BATCH; ) {
    const batch = await store.purgeDropped({ delivery, before, limit: PURGE_BATCH });
    purged.push(...batch);
    n = batch.length;
  }
  return purged;
}

/**
 * Batched callback delivery. Every emitted item goes to a durable outbox in one statement per 16
 * items (a Durable Object binds at most 100 values per statement); each tick sends what its budget
 * allows (each send settles on its own: one failure never affects another), carries the rest to the next
 * tick, and retries failures on the delivery's schedule until they are delivered or dropped to the
 * dead-letter table, from where they can be replayed.
 *
 * Why the carry-over is durable (an outbox) rather than held in memory: keeping it in memory is safe
 * only when losing it is, that is when the sender resumes from per-row progress of its own or the
 * receiver upserts so a re-delivery is harmless. A library cannot assume either, and a kill -9 must
 * lose nothing; the outbox costs one batched insert per emit, and per tick one transaction of a
 * few batched statements writing what the sends came to (delivered, retried, dropped).
 */
export class Delivery<T = unknown> {
  private last: (DeliveryPass & { at: number }) | null = null;

  constructor(
    readonly config: DeliveryConfig,
    private readonly deps: DeliveryDeps,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /**
   * Writes items to the outbox; they are sent by the next tick (at once when the engine runs
   * continuously). A key held by an outstanding item is skipped, so a callback waiting for its retry
   * is not emitted a second time (no duplicate daily callback while the first one waits to be retried).
   */
  async emit(items: readonly DeliveryItem<T>[]): Promise<EmitResult> {
    if (!Array.isArray(items)) throw new InvalidInputError(`delivery "${this.name}": emit takes an array of { key?, payload }, got ${describe(items)}`);
    const rows = items.map((item, i) => this.toRow(item, i));
    const keys = new Set<string>();
    const skipped: string[] = [];
    const unique = rows.filter((row) => {
      if (row.key === null) return true;
      if (keys.has(row.key)) return skipped.push(row.key), false;
      keys.add(row.key);
      return true;
    });
    const inserted = new Set(await this.deps.store.insertMany({ delivery: this.name, items: unique, now: this.deps.clock.now() }));
    for (const row of unique) if (!inserted.has(row.id) && row.key !== null) skipped.push(row.key);
    if (inserted.size) {
      this.deps.logger.debug("delivery.emitted", { delivery: this.name, count: inserted.size, skipped: skipped.length });
      this.deps.wake();
    }
    return { emitted: inserted.size, skipped };
  }

  /**
   * Emits from a source only when `ready()` says its data is complete (daily figures only once every
   * row has caught up to the end of the day, so none goes out partial). `pages` is read to the end; use
   * `keyset(...)` when sending changes the rows being paged.
   */
  async emitFrom<R>(source: { ready?: () => boolean | Promise<boolean>; pages: AsyncIterable<R[]> | Iterable<R[]>; item: (row: R) => DeliveryItem<T> }): Promise<EmitFromResult> {
    if (source.ready && !(await source.ready())) {
      this.deps.logger.debug("delivery.not_ready", { delivery: this.name });
      return { ready: false, emitted: 0, skipped: [] };
    }
    const total: EmitFromResult = { ready: true, emitted: 0, skipped: [] };
    for await (const page of source.pages) {
      const result = await this.emit(page.map(source.item));
      total.emitted += result.emitted;
      total.skipped.push(...result.skipped);
    }
    return total;
  }

  /**
   * @internal one tick's sends: due retries (at most `retryBatch`, within the tick's shared retry
   * allowance), then first sends, within the budget; their outcomes written together at the end.
   */
  async pass(budget: OutboundBudget): Promise<DeliveryPass> {
    const { store, clock } = this.deps;
    const now = clock.now();
    // The lease covers the send's timeout and the bookkeeping after it; a process killed mid-send
    // leaves its items to be sent again after it (at-least-once: receivers dedupe on the id).
    const leaseUntil = now + this.config.timeout * 2 + 10_000;
    let allowance = Math.min(this.config.budget, budget.remaining);
    // Retries first: under a backlog of new emissions they would otherwise wait forever.
    const wantedRetries = Math.min(this.config.retryBatch, allowance);
    const retryGrant = budget.takeRetries(wantedRetries);
    const retryRows = await store.claimDue({ delivery: this.name, retries: true, now, limit: retryGrant, leaseUntil });
    budget.giveBackRetries(retryGrant - retryRows.length);
    allowance -= retryRows.length;
    const freshGrant = budget.take(allowance);
    const freshRows = await store.claimDue({ delivery: this.name, retries: false, now, limit: freshGrant, leaseUntil });
    budget.giveBack(freshGrant - freshRows.length);

    const rows = [...retryRows, ...freshRows];
    // Each send's settlement is stamped with the clock when it came: a retry is timed from its own
    // failure, not from the start of a pass whose sends may take up to the send timeout.
    const settled = await Promise.all(
      rows.map((row) =>
        this.sendOne(row).then(
          () => ({ row, ok: true as const, at: clock.now() }),
          (reason: unknown) => ({ row, ok: false as const, reason, at: clock.now() }),
        ),
      ),
    );
    const outcomes: DeliveryOutcomes = { delivered: [], retries: [], dropped: [] };
    const events: (() => void)[] = [];
    for (const outcome of settled) {
      if (outcome.ok) {
        await this.delivered(outcome.row);
        outcomes.delivered.push(outcome.row.id);
      } else {
        events.push(this.failed(outcome.row, outcome.reason, outcome.at, outcomes));
      }
    }
    await store.recordOutcomes(outcomes);
    // Logged once written: an event never reports an outcome a crash then undid.
    for (const log of events) log();
    const pass: DeliveryPass = { sent: rows.length, delivered: outcomes.delivered.length, failed: outcomes.retries.length, dropped: outcomes.dropped.length, carried: false, nextAt: null };
    if (pass.sent > 0) this.deps.logger.debug("delivery.sent", { delivery: this.name, sent: pass.sent, delivered: pass.delivered, failed: pass.failed, dropped: pass.dropped });
    // Work is carried when the budget (or the tick's retry allowance), not the outbox, ended the pass.
    // Checking whether the starved kind had anything due would cost a query per tick; a 100 ms
    // wake-up that finds nothing is cheaper.
    const full = (grant: number, got: number) => grant > 0 && got === grant;
    pass.carried = full(freshGrant, freshRows.length) || freshGrant === 0 || full(retryGrant, retryRows.length) || (wantedRetries > 0 && retryGrant === 0);
    if (!pass.carried) pass.nextAt = await store.nextAt({ delivery: this.name });
    if (pass.carried) this.deps.logger.debug("delivery.carried", { delivery: this.name, sent: pass.sent, budget: budget.total });
    this.last = { ...pass, at: now };
    return pass;
  }

  async status(): Promise<DeliveryStatus> {
    const counts = await this.deps.store.counts({ delivery: this.name });
    return { name: this.name, budget: this.config.budget, retryBatch: this.config.retryBatch, ...counts, lastPass: this.last };
  }

  /** Items waiting for their first send (`retrying: false`) or for a retry, by id; page with the last item's id as `after`. */
  async outstanding(options: { retrying?: boolean; limit?: number; after?: string } = {}): Promise<(DeliveryMessage<T> & { lastError: string | null; runAt: number })[]> {
    const where = `delivery "${this.name}": outstanding`;
    const after = options.after === undefined ? undefined : checkText(options.after, `${where}: after`, { min: 0, max: MAX_ID_LENGTH });
    const rows = await this.deps.store.listOutstanding({ delivery: this.name, retrying: options.retrying ?? true, limit: checkLimit(options.limit), after });
    return rows.map((row) => ({ ...this.message(row), lastError: row.lastError, runAt: row.runAt }));
  }

  /** The dead-letter table, newest first; page with the last item's `droppedAt` and `id`. */
  async dropped(options: { limit?: number; before?: { droppedAt: number; id: string } } = {}) {
    const where = `delivery "${this.name}": dropped`;
    let before: { droppedAt: number; id: string } | undefined;
    if (options.before !== undefined) {
      const b: unknown = options.before;
      if (!b || typeof b !== "object") throw new InvalidInputError(`${where}: before must be { droppedAt, id } (the last item of the previous page), got ${describe(b)}`);
      const { droppedAt, id } = b as Record<string, unknown>;
      before = { droppedAt: toInstant(droppedAt, `${where}: before.droppedAt`), id: checkText(id, `${where}: before.id`, { max: MAX_ID_LENGTH }) };
    }
    const rows = await this.deps.store.listDropped({ delivery: this.name, limit: checkLimit(options.limit), before });
    return rows.map((row) => ({ ...this.message(row), attempt: row.attempts, lastError: row.lastError, droppedAt: row.droppedAt }));
  }

  /**
   * Sends dropped items again: one by id, or all dropped since a time. They keep their ids (receivers
   * still dedupe) and start a fresh retry schedule. A key now held by a newer item is not replayed.
   */
  async replay(target: { id: string } | { since: Date | number; limit?: number }): Promise<string[]> {
    const where = `delivery "${this.name}": replay`;
    if (!target || typeof target !== "object") throw new InvalidInputError(`${where} takes { id } or { since, limit? }, got ${describe(target)}`);
    const now = this.deps.clock.now();
    const moved =
      "id" in target
        ? await this.deps.store.replay({ delivery: this.name, ids: [checkText(target.id, `${where}: id`, { max: MAX_ID_LENGTH })], now, limit: 1 })
        : await this.deps.store.replay({ delivery: this.name, since: toInstant(target.since, `${where}: since`), now, limit: checkLimit(target.limit ?? 1_000, 10_000) });
    if (moved.length) {
      this.deps.logger.info("delivery.replayed", { delivery: this.name, count: moved.length, ids: moved.slice(0, 20) });
      this.deps.wake();
    }
    return moved;
  }

  /**
   * Deletes dead letters for good: one by id, or those dropped before a time (at most `limit`, default
   * 1,000, up to 10,000 per call). Returns the ids deleted. What is purged can no longer be replayed.
   */
  async purge(target: { id: string } | { before: Date | number; limit?: number }): Promise<string[]> {
    const where = `delivery "${this.name}": purge`;
    if (!target || typeof target !== "object" || ("id" in target) === ("before" in target)) {
      throw new InvalidInputError(`${where} takes { id } or { before, limit? }, got ${describe(target)}`);
    }
    const purged =
      "id" in target
        ? await this.deps.store.purgeDropped({ delivery: this.name, ids: [checkText(target.id, `${where}: id`, { max: MAX_ID_LENGTH })], limit: 1 })
        : await this.deps.store.purgeDropped({ delivery: this.name, before: toInstant(target.before, `${where}: before`), limit: checkLimit(target.limit ?? 1_000, 10_000) });
    if (purged.length) this.deps.logger.info("delivery.purged", { delivery: this.name, count: purged.length, ids: purged.slice(0, 20) });
    return purged;
  }

  /** Deletes the dead letters older than `deadLetterRetention`, batch after batch until one comes back short. */
  async prune(now: number): Promise<void> {
    const keep = this.config.deadLetterRetention;
    if (keep === false) return;
    const pruned = (await purgeDroppedBefore(this.deps.store, this.name, now - keep)).length;
    if (pruned) this.deps.logger.info("delivery.pruned", { delivery: this.name, count: pruned, olderThanMs: keep });
  }

  /**
   * One send; with a tracer, in a `deliver <delivery>` span (the messaging conventions' send, a
   * producer span) of a trace of its own, failed when the send throws or times out.
   */
  private sendOne(row: DeliveryRow): Promise<unknown> {
    const { tracer } = this.deps;
    if (!tracer) return this.send(row);
    const attributes: TraceAttributes = { ...messagingAttributes("send", "deliver", this.name), "messaging.message.id": row.id, "tickwork.delivery.attempt": row.attempts + 1 };
    if (row.key !== null) attributes["tickwork.delivery.key"] = row.key;
    return inSpan(tracer, `deliver ${this.name}`, { kind: SPAN_KIND.PRODUCER, root: true, attributes }, () => this.send(row));
  }

  private async send(row: DeliveryRow): Promise<unknown> {
    const message = this.message(row);
    return callWithTimeout(this.deps.clock, this.config.timeout, (signal) =>
      this.config.send(message as DeliveryMessage<unknown>, { signal, now: this.deps.clock.now(), logger: this.deps.logger }),
    );
  }

  private async delivered(row: DeliveryRow): Promise<void> {
    if (row.attempts > 0) this.deps.logger.info("delivery.retried", { delivery: this.name, id: row.id, key: row.key, attempt: row.attempts + 1 });
    if (!this.config.onDelivered) return;
    try {
      // Before the item leaves the outbox: its key stays held until the caller has recorded the
      // delivery, so a source read in between cannot emit it again.
      await this.config.onDelivered(this.message(row) as DeliveryMessage<unknown>);
    } catch (error) {
      this.deps.logger.error("delivery.on_delivered_failed", { delivery: this.name, id: row.id, key: row.key, error: errorText(error) });
    }
  }

  /**
   * Adds a failed send to `outcomes`: a retry `retry(attempts)` after `failedAt`, or, when the policy
   * answers null (the schedule ran out) or a delay past the bound on durations, a drop. Returns the
   * event to log once the outcomes are written.
   */
  private failed(row: DeliveryRow, reason: unknown, failedAt: number, outcomes: DeliveryOutcomes): () => void {
    const attempts = row.attempts + 1;
    const error = errorText(reason);
    const fields = { delivery: this.name, id: row.id, key: row.key, error, failedAt };
    const delay = nextDelay(this.config.retry, attempts);
    if (delay === null || delay > MAX_DURATION_MS) {
      outcomes.dropped.push({ id: row.id, attempts, error, droppedAt: failedAt });
      const why = delay === null ? "the retry schedule ran out" : `the retry policy answered ${delay} ms, past the ${MAX_DURATION_MS} ms bound on durations`;
      return () => this.deps.logger.error("delivery.dropped", { ...fields, attempts, reason: why });
    }
    const retryAt = failedAt + delay;
    outcomes.retries.push({ id: row.id, attempts, runAt: retryAt, error });
    return () => this.deps.logger.warn("delivery.failed", { ...fields, attempt: attempts, retryAt });
  }

  private message(row: DeliveryRow): DeliveryMessage<T> {
    return { id: row.id, delivery: this.name, key: row.key, payload: JSON.parse(row.payload) as T, attempt: row.attempts + 1, createdAt: row.createdAt };
  }

  private toRow(item: DeliveryItem<T>, index: number): { id: string; key: string | null; payload: string } {
    const where = `delivery "${this.name}": item ${index}`;
    if (!item || typeof item !== "object" || !("payload" in item)) throw new InvalidInputError(`${where} must be { key?, payload }, got ${describe(item)}`);
    const key = item.key === undefined || item.key === null ? null : checkText(item.key, `${where}: key`, { max: MAX_INDEXED_TEXT });
    return { id: globalThis.crypto.randomUUID(), key, payload: serialiseJson(item.payload, { where, subject: "payload" }) };
  }
}

function checkLimit(limit: number | undefined, max = 1_000): number {
  const value = limit ?? 100;
  if (!Number.isInteger(value) || value < 1 || value > max) throw new InvalidInputError(`limit must be an integer from 1 to ${max}, got ${describe(limit)}`);
  return value;
}
