/**
 * How a receiver fails a push on purpose:
 * - `error`: answers 500 at once;
 * - `hang`: holds the request without answering; the receiver drops the connection after its
 *   `hangMs` (real time), or never when that is Infinity, leaving it to the fan-out's timeout.
 */
export type FailureMode = "error" | "hang";

/**
 * Decides, for the n-th push a receiver gets (1-based, counted across its restarts), whether it
 * fails and how; null answers normally.
 */
export type FailureDecider = (receiver: string, n: number) => FailureMode | null;

export interface RandomFailureOptions {
  seed: number;
  /** Share of pushes that fail, 0 to 1. */
  rate: number;
  /** How the failing pushes fail, drawn evenly; default ["error"]. */
  modes?: readonly FailureMode[];
}

/**
 * A share of pushes fails, drawn from a hash of (seed, receiver, n) rather than from one random
 * stream: 77 pushes arrive in whatever order the network gives, and a stream would hand out its
 * draws in that order. With the hash, a seed fails the same pushes every run.
 */
export function randomFailures(options: RandomFailureOptions): FailureDecider {
  const { seed, rate } = options;
  const modes = options.modes ?? ["error"];
  if (!Number.isInteger(seed)) throw new RangeError(`randomFailures: seed must be an integer, got ${String(seed)}`);
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`randomFailures: rate must be between 0 and 1, got ${String(rate)}`);
  if (modes.length === 0) throw new RangeError("randomFailures: modes must name at least one failure mode");
  return (receiver, n) => {
    if (unit(seed, `${receiver}#${n}`) >= rate) return null;
    return modes[Math.floor(unit(seed, `${receiver}#${n}/mode`) * modes.length)]!;
  };
}

/** A number in [0, 1) from (seed, key): FNV-1a over the key, then murmur3's finaliser to spread the bits. */
function unit(seed: number, key: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}
