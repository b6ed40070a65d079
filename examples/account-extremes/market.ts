/**
 * A deterministic market for the demo, the tests and the benchmark: the same seed gives the same
 * accounts and the same price ticks on every run, so a test can compute the expected extremes itself.
 */
import { MINUTE } from "./periods.js";

export interface PriceTick {
  /** Epoch ms. */
  at: number;
  price: number;
}

/** An account to track. Its value at a price is `baseValue + exposure * price` (exposure < 0: short). */
export interface TrackedAccount {
  accountId: string;
  baseValue: number;
  exposure: number;
}

/** mulberry32: a small, fast 32-bit generator, good enough for test data. Returns numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const cents = (value: number) => Math.round(value * 100) / 100;

/** A random walk of prices in cents, one tick every `every` ms from `from` to `to` inclusive. */
export function priceTicks(options: { seed: number; from: number; to: number; every?: number; start?: number }): PriceTick[] {
  const random = seededRandom(options.seed);
  const every = options.every ?? MINUTE;
  let price = options.start ?? 100;
  const ticks: PriceTick[] = [];
  for (let at = options.from; at <= options.to; at += every) {
    ticks.push({ at, price });
    price = Math.max(0.01, cents(price * (1 + (random() - 0.5) * 0.01)));
  }
  return ticks;
}

/** `count` accounts `acct-00001`...: a cash balance and a position of -50 to 150 units. */
export function trackedAccounts(count: number, seed: number): TrackedAccount[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => ({
    accountId: `acct-${String(i + 1).padStart(5, "0")}`,
    baseValue: cents(1_000 + random() * 49_000),
    exposure: Math.floor(random() * 201) - 50,
  }));
}

/** An account's value at a price, computed as the databases compute it. */
export const valueAt = (account: TrackedAccount, price: number): number => account.baseValue + account.exposure * price;
