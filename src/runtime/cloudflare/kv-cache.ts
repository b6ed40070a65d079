import type { CacheStore } from "../../cache/store.js";
import { toMs, type Duration } from "../../core/duration.js";
import { InvalidInputError } from "../../core/errors.js";
import type { KvNamespaceLike } from "./platform.js";

export interface KvCacheOptions {
  /** Prefixed to every key (several caches in one namespace); default none. */
  prefix?: string;
  /**
   * KV deletes an entry this long after it was written (KV's own minimum is 60s). Default: kept until
   * overwritten; readers pass `maxAge` for staleness either way.
   */
  expireAfter?: Duration;
}

interface Metadata {
  fetchedAt: number;
}

/** KV refuses an expirationTtl below a minute. */
const KV_MIN_TTL_S = 60;

/**
 * `tw.cache` on Workers KV (say, prices under `price:{tokenId}` written by a periodic task and read
 * by the Worker's routes without waking the Durable Object). The value is stored as its JSON text, so any
 * other reader of the namespace sees plain JSON; `fetchedAt` travels in the key's metadata, so a read
 * is one KV operation. KV is eventually consistent across locations: a value written in one place
 * is seen elsewhere within about a minute, which a cache with a `maxAge` of minutes tolerates.
 */
export function kvCache(namespace: KvNamespaceLike, options: KvCacheOptions = {}): CacheStore {
  const prefix = options.prefix ?? "";
  let expirationTtl: number | undefined;
  if (options.expireAfter !== undefined) {
    expirationTtl = Math.ceil(toMs(options.expireAfter) / 1000);
    if (expirationTtl < KV_MIN_TTL_S) throw new InvalidInputError(`kvCache: expireAfter must be at least 60s (KV's minimum), got ${JSON.stringify(options.expireAfter)}`);
  }
  return {
    async put({ key, value, fetchedAt }) {
      const metadata: Metadata = { fetchedAt };
      await namespace.put(prefix + key, value, expirationTtl === undefined ? { metadata } : { metadata, expirationTtl });
    },
    async get({ key }) {
      const { value, metadata } = await namespace.getWithMetadata<Metadata>(prefix + key, "text");
      if (value === null) return null;
      // A value written by something else than this cache has no fetchedAt: it is as old as can be.
      return { value, fetchedAt: typeof metadata?.fetchedAt === "number" ? metadata.fetchedAt : 0 };
    },
    async delete({ key }) {
      // KV's delete does not say whether the key existed.
      const existed = (await namespace.get(prefix + key, "text")) !== null;
      await namespace.delete(prefix + key);
      return existed;
    },
  };
}
