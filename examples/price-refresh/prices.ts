import type { Cache } from "../../src/cache/index.js";
import type { RateLimit } from "../../src/http/index.js";

/**
 * The cache side of the prices: the key the price task writes and the readers the API uses. The
 * task is the only writer; every request reads. That is the seed's point: prices are the same for
 * every user, so one scheduled fetch serves them all and no request ever waits on Tenero.
 */

/** The seed's KV key. */
export function priceKey(tokenId: string): string {
  return `tenero:price:${tokenId}`;
}

/** What the price task caches per token; the cache adds `fetchedAt`. */
export interface CachedPrice {
  /** USD. */
  price: number;
  /** Tenero's rate-limit headers on the answer that carried this price (budget left, reset, limiter type). */
  rateLimit: RateLimit | null;
}

/** One token as `GET /api/prices` reports it: a price only while it is fresh enough. */
export type PriceReport =
  | { price: number; fetchedAt: number; ageMs: number; status: "fresh" }
  /** Fetched once, but longer ago than the reader accepts: no price, and how old the last one is. */
  | { price: null; fetchedAt: number; ageMs: number; status: "stale" }
  /** Never fetched (not in the token set yet, or every fetch failed). */
  | { price: null; fetchedAt: null; ageMs: null; status: "missing" };

/** The seed's `getCachedTokenPrice(kv, tokenId)`: the price and when it was fetched, or null when missing or older than `maxAgeMs`. */
export async function getCachedTokenPrice(cache: Cache, tokenId: string, maxAgeMs: number): Promise<{ price: number; fetchedAt: number } | null> {
  const entry = await cache.get<CachedPrice>(priceKey(tokenId), { maxAge: maxAgeMs });
  return entry ? { price: entry.value.price, fetchedAt: entry.fetchedAt } : null;
}

/** Each token's price, or why there is none. Reads the entry without `maxAge` so a stale one can still report its age. */
export async function readPrices(cache: Cache, tokens: readonly string[], options: { maxAgeMs: number; now: number }): Promise<Record<string, PriceReport>> {
  const entries = await Promise.all(tokens.map((t) => cache.get<CachedPrice>(priceKey(t))));
  const out: Record<string, PriceReport> = {};
  tokens.forEach((token, i) => {
    const entry = entries[i];
    if (!entry) {
      out[token] = { price: null, fetchedAt: null, ageMs: null, status: "missing" };
      return;
    }
    const ageMs = Math.max(0, options.now - entry.fetchedAt);
    out[token] =
      ageMs <= options.maxAgeMs
        ? { price: entry.value.price, fetchedAt: entry.fetchedAt, ageMs, status: "fresh" }
        : { price: null, fetchedAt: entry.fetchedAt, ageMs, status: "stale" };
  });
  return out;
}

/** When each token was last fetched (null: never), for the price task's stalest-first order. */
export async function lastFetched(cache: Cache, tokens: readonly string[]): Promise<Map<string, number | null>> {
  const entries = await Promise.all(tokens.map((t) => cache.get(priceKey(t))));
  return new Map(tokens.map((t, i) => [t, entries[i]?.fetchedAt ?? null]));
}
