// tickwork/cache: values refreshed on a schedule and read without a round trip (`tw.cache`).
export { Cache, type CacheEntry } from "./cache.js";
