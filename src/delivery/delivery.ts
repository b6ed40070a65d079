import { nextDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import type { OutboundBudget } from "../core/budget.js";
import { InvalidInputError, describe, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { instantOf } from "../core/time.js";
import { callWithTimeout } from "../core/timeout.js";
import type { DeliveryConfig, DeliveryItem, DeliveryMessage } from "./options.js";
import type { DeliveryCounts, DeliveryRow, DeliveryStore } from "./store.js";

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
}

const MAX_KEY_LENGTH = 512;

/**
 * Batched callback delivery. Every emitted item goes to a durable outbox in one statement per 16
 * items (a Durable Object binds at most 100 values per statement); each tick sends what its budget
 * allows with `Promise.allSettled` (one failure never affects another), carries the rest to the next
 * tick, and retries failures on the delivery's schedule until they are delivered or dropped to the
 * dead-letter table, from where they can be replayed.
 *
 * Why the carry-over is durable (an outbox) rather than held in memory: keeping it in memory is safe
 * only when losing it is, that is when the sender resumes from per-row progress of its own or the
 * receiver upserts so a re-delivery is harmless. A library cannot assume either, and a kill -9 must
 * lose nothing; the outbox costs one batched insert per emit and one batched delete per tick.
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

  /** @internal one tick's sends: due retries (at most `retryBatch`), then first sends, within the budget. */
  async pass(budget: OutboundBudget): Promise<DeliveryPass> {
    const { store, clock } = this.deps;
    const now = clock.now();
    // The lease covers the send's timeout and the bookkeeping after it; a process killed mid-send
    // leaves its items to be sent again after it (at-least-once: receivers dedupe on the id).
    const leaseUntil = now + this.config.timeout * 2 + 10_000;
    let allowance = Math.min(this.config.budget, budget.remaining);
    const claim = async (retries: boolean, wanted: number) => {
      const granted = budget.take(Math.min(wanted, allowance));
      const rows = await store.claimDue({ delivery: this.name, retries, now, limit: granted, leaseUntil });
      budget.giveBack(granted - rows.length);
      allowance -= rows.length;
      return { rows, full: granted > 0 && rows.length === granted, starved: granted === 0 };
    };
    // Retries first: under a backlog of new emissions they would otherwise wait forever.
    const retries = await claim(true, this.config.retryBatch);
    const fresh = await claim(false, allowance);
    const rows = [...retries.rows, ...fresh.rows];
    const outcomes = await Promise.allSettled(rows.map((row) => this.sendOne(row)));
    const pass: DeliveryPass = { sent: rows.length, delivered: 0, failed: 0, dropped: 0, carried: false, nextAt: null };
    const delivered: string[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const row = rows[i]!;
      if (outcome.status === "fulfilled") {
        await this.delivered(row);
        delivered.push(row.id);
        pass.delivered++;
      } else if (await this.failed(row, outcome.reason, now)) pass.dropped++;
      else pass.failed++;
    }
    await store.deleteMany({ ids: delivered });
    // Work is carried when the budget, not the outbox, ended the pass. Checking whether the starved
    // kind had anything due would cost a query per tick; a 100 ms wake-up that finds nothing is cheaper.
    pass.carried = fresh.full || fresh.starved || retries.full;
    if (!pass.carried) pass.nextAt = await store.nextAt({ delivery: this.name });
    if (pass.carried) this.deps.logger.debug("delivery.carried", { delivery: this.name, sent: pass.sent, budget: budget.total });
    this.last = { ...pass, at: now };
    return pass;
  }

  async status(): Promise<DeliveryStatus> {
    const counts = await this.deps.store.counts({ delivery: this.name });
    return { name: this.name, budget: this.config.budget, retryBatch: this.config.retryBatch, ...counts, lastPass: this.last };
  }

  /** Items waiting for their first send (`retrying: false`) or for a retry, by id. */
  async outstanding(options: { retrying?: boolean; limit?: number; after?: string } = {}): Promise<(DeliveryMessage<T> & { lastError: string | null; runAt: number })[]> {
    const rows = await this.deps.store.listOutstanding({ delivery: this.name, retrying: options.retrying ?? true, limit: checkLimit(options.limit), after: options.after });
    return rows.map((row) => ({ ...this.message(row), lastError: row.lastError, runAt: row.runAt }));
  }

  /** The dead-letter table, newest first; page with the last item's `droppedAt` and `id`. */
  async dropped(options: { limit?: number; before?: { droppedAt: number; id: string } } = {}) {
    const rows = await this.deps.store.listDropped({ delivery: this.name, limit: checkLimit(options.limit), before: options.before });
    return rows.map((row) => ({ ...this.message(row), attempt: row.attempts, lastError: row.lastError, droppedAt: row.droppedAt }));
  }

  /**
   * Sends dropped items again: one by id, or all dropped since a time. They keep their ids (receivers
   * still dedupe) and start a fresh retry schedule. A key now held by a newer item is not replayed.
   */
  async replay(target: { id: string } | { since: Date | number; limit?: number }): Promise<string[]> {
    if (!target || typeof target !== "object") throw new InvalidInputError(`delivery "${this.name}": replay takes { id } or { since, limit? }, got ${describe(target)}`);
    const now = this.deps.clock.now();
    const moved =
      "id" in target
        ? await this.deps.store.replay({ delivery: this.name, ids: [checkId(target.id)], now, limit: 1 })
        : await this.deps.store.replay({ delivery: this.name, since: checkSince(target.since), now, limit: checkLimit(target.limit ?? 1_000, 10_000) });
    if (moved.length) {
      this.deps.logger.info("delivery.replayed", { delivery: this.name, count: moved.length, ids: moved.slice(0, 20) });
      this.deps.wake();
    }
    return moved;
  }

  private async sendOne(row: DeliveryRow): Promise<unknown> {
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

  /** Records a failed send; returns true when the retry schedule ran out and the item was dropped. */
  private async failed(row: DeliveryRow, reason: unknown, now: number): Promise<boolean> {
    const attempts = row.attempts + 1;
    const error = errorText(reason);
    const delay = nextDelay(this.config.retry, attempts);
    if (delay === null) {
      await this.deps.store.drop({ id: row.id, attempts, error, now });
      this.deps.logger.error("delivery.dropped", { delivery: this.name, id: row.id, key: row.key, attempts, error });
      return true;
    }
    const retryAt = now + delay;
    await this.deps.store.reschedule({ id: row.id, attempts, runAt: retryAt, error });
    this.deps.logger.warn("delivery.failed", { delivery: this.name, id: row.id, key: row.key, attempt: attempts, error, retryAt });
    return false;
  }

  private message(row: DeliveryRow): DeliveryMessage<T> {
    return { id: row.id, delivery: this.name, key: row.key, payload: JSON.parse(row.payload) as T, attempt: row.attempts + 1, createdAt: row.createdAt };
  }

  private toRow(item: DeliveryItem<T>, index: number): { id: string; key: string | null; payload: string } {
    const where = `delivery "${this.name}": item ${index}`;
    if (!item || typeof item !== "object" || !("payload" in item)) throw new InvalidInputError(`${where} must be { key?, payload }, got ${describe(item)}`);
    const key = item.key ?? null;
    if (key !== null && (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH)) {
      throw new InvalidInputError(`${where}: key must be a string of 1 to ${MAX_KEY_LENGTH} characters, got ${describe(key)}`);
    }
    return { id: globalThis.crypto.randomUUID(), key, payload: serialiseJson(item.payload, { where, subject: "payload" }) };
  }
}

function checkLimit(limit: number | undefined, max = 1_000): number {
  const value = limit ?? 100;
  if (!Number.isInteger(value) || value < 1 || value > max) throw new InvalidInputError(`limit must be an integer from 1 to ${max}, got ${describe(limit)}`);
  return value;
}

function checkId(id: unknown): string {
  if (typeof id !== "string" || id.length === 0 || id.length > 100) throw new InvalidInputError(`id must be a delivery id string, got ${describe(id)}`);
  return id;
}

function checkSince(value: unknown): number {
  const ms = instantOf(value);
  if (ms === null) throw new InvalidInputError(`since must be a Date or epoch milliseconds, got ${describe(value)}`);
  return ms;
}
