/**
 * What the 5 ms workload's handlers allow on this machine, measured in the same run: `concurrency`
 * loops in this process, each awaiting the same timer the handlers await, with no queue around
 * them. The arithmetic ideal (concurrency / handler time) assumes a timer fires exactly when due;
 * Node's fire at the earliest on the millisecond after it and later when the loop is busy, so even
 * a queue with no cost at all stays under the ideal by that much. A system's row divided by this
 * figure is the share of the handlers' own limit it reached.
 */
import { now, sleep } from "../support.js";

/** Handler calls per second when `calls` timers of `handlerMs` run `concurrency` at a time. */
export async function timerCeiling(concurrency: number, handlerMs: number, calls: number): Promise<number> {
  let left = calls;
  const loop = async () => {
    while (left > 0) {
      left--;
      await sleep(handlerMs);
    }
  };
  const t0 = now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return (calls / (now() - t0)) * 1000;
}
