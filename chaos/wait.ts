/**
 * Waiting in a chaos run. Progress is always waited for as a condition with a deadline (`until`);
 * `pause` is only for the pacing a scenario prescribes (a kill every 2-5 s, a server down for 2 s),
 * never a stand-in for "long enough for the system to have done something".
 */

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export class DeadlineError extends Error {}

/**
 * Checks `probe` every `everyMs` until it returns something other than undefined, null or false;
 * throws a DeadlineError naming `what` after `ms`. A probe that throws counts as "not yet" (the
 * database may be down on purpose); its last error is quoted if the deadline passes.
 */
export async function until<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, ms: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? "" : ` (last error: ${String(lastError)})`;
      throw new DeadlineError(`gave up waiting for ${what} after ${(ms / 1000).toFixed(1)} s${why}`);
    }
    await pause(everyMs);
  }
}
