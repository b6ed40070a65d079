import { MAX_TIME_MS } from "../../../src/core/bounds.js";
import type { EnqueuedJob } from "../../../src/queue/job.js";
import type { Tickwork } from "../../../src/tickwork.js";
import { T0 } from "../../support/queue-fixtures.js";
import { lossyAt } from "./outcome.js";

/** The queue's default `retry.maxAttempts`. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * An accepted job is stored as it was given: the same key (not one with U+FFFD for a lone
 * surrogate), priority and attempts, a due time within 1970..9999 equal to the one asked for, and a
 * payload that reads back as it was (not a Map turned into `{}`).
 */
export async function expectStoredAsGiven(tw: Tickwork, returned: EnqueuedJob, payload: unknown, options: Record<string, unknown>): Promise<void> {
  const problems: string[] = [];
  const job = await tw.jobs.get(returned.id);
  if (!job) throw new Error(`enqueue returned job ${returned.id}, which tw.jobs.get does not find`);
  if (returned.duplicate) {
    // A duplicate is the live job holding the key: only the key is the caller's.
    if (job.key !== options.key) problems.push(`duplicate's key ${JSON.stringify(job.key)} is not the key given ${JSON.stringify(options.key)}`);
  } else {
    const key = options.key ?? null;
    if (job.key !== key) problems.push(`key stored as ${JSON.stringify(job.key)}, given ${JSON.stringify(key)}`);
    if (returned.key !== job.key) problems.push(`key returned as ${JSON.stringify(returned.key)}, stored as ${JSON.stringify(job.key)}`);
    const priority = options.priority ?? 0;
    if (job.priority !== priority) problems.push(`priority stored as ${job.priority}, given ${String(priority)}`);
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (job.maxAttempts !== maxAttempts) problems.push(`maxAttempts stored as ${job.maxAttempts}, given ${String(maxAttempts)}`);
    if (!(job.runAt >= 0 && job.runAt <= MAX_TIME_MS)) problems.push(`runAt stored as ${job.runAt}, outside 1970..9999`);
    if (returned.runAt !== job.runAt) problems.push(`runAt returned as ${returned.runAt}, stored as ${job.runAt}`);
    if (options.runAt !== undefined) {
      const asked = options.runAt instanceof Date ? options.runAt.getTime() : Number(options.runAt);
      if (!(Math.abs(job.runAt - asked) <= 1)) problems.push(`runAt stored as ${job.runAt}, given ${asked}`);
    } else if (options.delay !== undefined) {
      if (!(job.runAt >= T0)) problems.push(`a delay of ${String(options.delay)} stored runAt ${job.runAt}, before now`);
    }
    const lost = lossyAt(payload);
    if (lost) problems.push(`accepted a payload that JSON changes, at ${lost}`);
    else if (JSON.stringify(job.payload) !== JSON.stringify(payload)) {
      problems.push(`payload reads back as ${JSON.stringify(job.payload)?.slice(0, 200)}, given ${JSON.stringify(payload)?.slice(0, 200)}`);
    }
  }
  if (problems.length) throw new Error(`job ${job.id} is not stored as given: ${problems.join("; ")}`);
}
