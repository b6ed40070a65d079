import * as z from "zod";
import { schedule, type Backoff } from "../core/backoff.js";
import { INT32_MAX, checkText } from "../core/bounds.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import type { Logger } from "../core/logger.js";

/** What `emit` takes: a payload, and optionally a key that one outstanding item holds at a time. */
export interface DeliveryItem<T> {
  /** At most one item per key is outstanding (sent, failed, waiting for a retry); an emit of a held key is skipped. */
  key?: string | null;
  payload: T;
}

/** What `send` receives. `id` is stable across retries and replays: receivers dedupe on it. */
export interface DeliveryMessage<T> {
  id: string;
  delivery: string;
  key: string | null;
  payload: T;
  /** 1 for the first send. */
  attempt: number;
  createdAt: number;
}

export interface SendContext {
  /** Aborted when the send's timeout passes. Pass it to `fetch` or an RPC that takes one. */
  signal: AbortSignal;
  /** The engine's clock, epoch ms (a Standard Webhooks sender stamps it). */
  now: number;
  logger: Logger;
}

export type Send<T> = (message: DeliveryMessage<T>, ctx: SendContext) => unknown;

/**
 * The default retry steps: 1m, 5m, 15m, 1h, 2h, then the item is dropped (with an event) after about
 * 3.5 hours: long enough to ride out a receiver's deploy or outage, short enough that a stale
 * callback is not delivered a day late.
 */
export const DEFAULT_RETRY = ["1m", "5m", "15m", "1h", "2h"] as const;

const deliveryOptionsSchema = z
  .object({
    send: fn<Send<unknown>>("a function (message, ctx) => Promise"),
    /** Most calls this delivery makes in one tick (its share of the engine's `tickBudget`); default 500. */
    budget: z.number().int().min(1).max(INT32_MAX).default(500),
    /**
     * Most retries this delivery sends per tick, within `budget` and within the engine's `retryBudget`
     * (default 50, shared by every delivery in the tick). Default 50: the engine's allowance alone
     * bounds it. Set it lower to keep one delivery's backlog of failed items (a receiver that was
     * down) from taking the whole allowance. At least 1: with none, failed items would never be
     * retried nor dropped, and stay due forever.
     */
    retryBatch: z.number().int().min(1).max(INT32_MAX).default(50),
    /** Delay before each retry; `null` from the policy drops the item. Default 1m 5m 15m 1h 2h (`DEFAULT_RETRY`). */
    retry: fn<Backoff>("a backoff: schedule([...]), exponential({...}) or (attempt) => ms | null").default(() => schedule([...DEFAULT_RETRY])),
    /**
     * Called after a successful send, before the item leaves the outbox: where the sender records its
     * progress (a daily callback advances its row's `daily_date`, so the row is not emitted again).
     */
    onDelivered: fn<(message: DeliveryMessage<unknown>) => unknown>("a function (message) => void").optional(),
    /**
     * How long a dropped item stays in the dead-letter table, where it can be read and replayed, before
     * the engine's upkeep deletes it; `false` keeps it until purged by hand. Default 14 days, as long as
     * a failed job is kept.
     */
    deadLetterRetention: z.union([durationMs, z.literal(false)]).default(14 * 86_400_000),
    /** A send that has not answered after this long fails (and is retried); default 30s. */
    timeout: durationMs.refine((ms) => ms >= 1 && ms <= INT32_MAX, `a send timeout must be from 1 ms to ${INT32_MAX} ms (the longest a timer waits)`).default(30_000),
  })
  .strict();

export type DeliveryOptions<T> = Omit<z.input<typeof deliveryOptionsSchema>, "send" | "onDelivered"> & {
  send: Send<T>;
  onDelivered?: (message: DeliveryMessage<T>) => unknown;
};

export type DeliveryConfig = z.output<typeof deliveryOptionsSchema> & { name: string };

/** Delivery names are stored with every item and indexed with its key: short, no NUL, well-formed. */
export const MAX_NAME_LENGTH = 100;

export function parseDeliveryOptions(name: string, options: unknown): DeliveryConfig {
  checkText(name, "delivery name", { max: MAX_NAME_LENGTH });
  return { name, ...parseOptions(deliveryOptionsSchema, options, `delivery "${name}"`) };
}
