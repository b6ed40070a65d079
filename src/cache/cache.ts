import { checkInstant, checkText, preview } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import { instantOf } from "../core/time.js";
import type { CacheStore } from "./store.js";

/** A cached value and when it was fetched from its source (e.g. `{ value: price, fetchedAt }`), so a reader can judge its age. */
export interface CacheEntry<T> {
  value: T;
  fetchedAt: number;
}

/** Keys are the table's primary key: 512 characters fit a PostgreSQL btree row even at 4 bytes each. */
const MAX_KEY_LENGTH = 512;

/**
 * A small key-value cache for values fetched on a schedule and read on the request path (prices
 * under `price:{tokenId}`, say): a periodic task puts, readers get with the staleness they accept,
 * and no request waits on the upstream or spends its rate limit.
 */
export class Cache {
  constructor(
    private readonly store: CacheStore,
    private readonly now: () => number,
  ) {}

  /** Stores `value` (JSON-serialisable) with `fetchedAt` (default now). */
  async put<T>(key: string, value: T, options: { fetchedAt?: Date | number } = {}): Promise<CacheEntry<T>> {
    checkKey(key);
    const fetchedAt = options.fetchedAt === undefined ? this.now() : instantOf(options.fetchedAt);
    // An integer, as Date.getTime() gives: PostgreSQL's bigint column would refuse 1.5 where SQLite keeps it.
    if (fetchedAt === null || !Number.isInteger(fetchedAt)) throw new InvalidInputError(`cache.put: fetchedAt must be a Date or epoch milliseconds (an integer), got ${preview(options.fetchedAt)}`);
    checkInstant(fetchedAt, "cache.put: fetchedAt");
    const text = serialiseJson(value, { where: `cache.put(${JSON.stringify(key)})`, subject: "the value" });
    await this.store.put({ key, value: text, fetchedAt });
    return { value, fetchedAt };
  }

  /** The entry, or null when missing or older than `maxAge`. */
  async get<T = unknown>(key: string, options: { maxAge?: Duration } = {}): Promise<CacheEntry<T> | null> {
    checkKey(key);
    const maxAge = options.maxAge === undefined ? undefined : maxAgeOf(options.maxAge);
    const row = await this.store.get({ key });
    if (!row) return null;
    if (maxAge !== undefined && this.now() - row.fetchedAt > maxAge) return null;
    return { value: JSON.parse(row.value) as T, fetchedAt: row.fetchedAt };
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    return this.store.delete({ key });
  }
}

/** `maxAge` as milliseconds; a refusal names the option. */
function maxAgeOf(maxAge: Duration): number {
  try {
    return toMs(maxAge);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(`cache.get: maxAge: ${error.message}`, error.code);
    throw error;
  }
}

/**
 * A key the store holds and compares exactly: PostgreSQL refuses NUL in text and would store a lone
 * surrogate as U+FFFD, where two different keys would meet; SQLite keeps both. Refused on every store.
 */
function checkKey(key: unknown): asserts key is string {
  checkText(key, "cache key", { max: MAX_KEY_LENGTH });
}
