import type { Job, JobStatus } from "../../queue/job.js";
import type { Tickwork } from "../../tickwork.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, JSON_OPTION, LOG_LEVEL_OPTION, flag, noPositionals, positionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import { MAX_ID, checkText } from "../../core/bounds.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, isInputError, messageOf, usage } from "../errors.js";
import { firstLine, note, print, printJson, table, time } from "../output.js";
import { configOf, openSession } from "../session.js";

const STATUSES: readonly JobStatus[] = ["pending", "running", "succeeded", "failed", "cancelled"];
/** `--state`: pending jobs due now (the backlog) or scheduled for later, as the filter's `due` takes them. */
const STATES: Readonly<Record<string, boolean>> = { due: true, scheduled: false };
/** The store's attempts column is a 32-bit integer. */
const MAX_ATTEMPTS = 2_147_483_647;
const JOB_ID = /^[1-9][0-9]{0,18}$/;
/** A job key's bound, as `enqueue` takes it: a longer filter could match nothing. */
const MAX_KEY_LENGTH = 255;
const COMMON = { ...DATABASE_OPTIONS, ...CONFIG_OPTION, ...JSON_OPTION, ...LOG_LEVEL_OPTION };

export const jobsListCommand: Command = {
  name: "jobs list",
  summary: "jobs, newest first, by queue, status, due or scheduled, attempts, key or flow parent",
  args: "[options]",
  description: "Lists jobs, newest first: the filters are the dashboard's job browser's. Page with --before <the last id shown>.",
  options: {
    queue: { type: "string", value: "<name>", description: "only this queue's jobs" },
    status: { type: "string", value: "<status>", description: `only jobs in this status: ${STATUSES.join(", ")}` },
    state: { type: "string", value: "<state>", description: "only pending jobs that are due now (due: the backlog) or scheduled for later (scheduled)" },
    "min-attempts": { type: "string", value: "<n>", description: "only jobs that started at least this many attempts (2: those that failed at least once)" },
    key: { type: "string", value: "<key>", description: "only jobs with this dedupe key" },
    parent: { type: "string", value: "<id>", description: "only the children of this flow parent (or batch completion job)" },
    before: { type: "string", value: "<id>", description: "only jobs older than this one (the next page)" },
    limit: { type: "string", value: "<n>", description: "at most this many, 1 to 500 (default 50)" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "jobs list";
    noPositionals(parsed, command);
    const status = stringOption(parsed, "status");
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(", ")}, got "${status}"`, command);
    const state = stringOption(parsed, "state");
    if (state !== undefined && !(state in STATES)) throw new UsageError(`--state must be one of ${Object.keys(STATES).join(", ")}, got "${state}"`, command);
    if (state !== undefined && status !== undefined && status !== "pending") throw new UsageError(`--state ${state} applies to pending jobs, and --status is ${status}: give one of them`, command);
    const minAttemptsText = stringOption(parsed, "min-attempts");
    const minAttempts = minAttemptsText === undefined ? undefined : Number(minAttemptsText);
    if (minAttemptsText !== undefined && (!/^\d{1,10}$/.test(minAttemptsText) || minAttempts! > MAX_ATTEMPTS)) {
      throw new UsageError(`--min-attempts must be an integer from 0 to ${MAX_ATTEMPTS}, got "${minAttemptsText}"`, command);
    }
    const limitText = stringOption(parsed, "limit") ?? "50";
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > 500) throw new UsageError(`--limit must be an integer from 1 to 500, got "${limitText}"`, command);
    const before = stringOption(parsed, "before");
    if (before !== undefined) checkIds([before], command, "--before");
    const parent = stringOption(parsed, "parent");
    if (parent !== undefined) checkIds([parent], command, "--parent");
    const key = stringOption(parsed, "key");
    if (key !== undefined) usage(command, () => checkText(key, "--key", { max: MAX_KEY_LENGTH }));
    const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "inspect" });
    try {
      const queue = stringOption(parsed, "queue");
      if (queue !== undefined) checkQueue(session.tw, queue, command);
      const filter = { queue, status: status as JobStatus | undefined, due: state === undefined ? undefined : STATES[state], minAttempts, key, parent, before, limit };
      const jobs = await session.tw.jobs.list(filter);
      if (flag(parsed, "json")) printJson(jobs);
      else if (jobs.length === 0) print("no jobs");
      else {
        const headers = ["ID", "QUEUE", "STATUS", "ATTEMPTS", "RUN AT", "KEY", "LAST ERROR"];
        const rows = jobs.map((j) => [j.id, j.queue, j.status, `${j.attempts}/${j.maxAttempts}`, time(j.runAt), j.key ?? "", firstLine(j.lastError, 60)]);
        table(headers, rows, ["ID", "ATTEMPTS"]).forEach((line) => print(line));
      }
      if (jobs.length === limit) note(`more may follow: add --before ${jobs.at(-1)!.id}`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

export const jobsRetryCommand: Command = {
  name: "jobs retry",
  summary: "run failed or cancelled jobs again",
  args: "<id>... | --failed --queue <name> [options]",
  description: [
    "Moves failed or cancelled jobs back to pending with a fresh set of attempts (their last error is kept).",
    "With --failed --queue <name>, every failed job of that queue.",
  ].join("\n"),
  options: {
    failed: { type: "boolean", description: "every failed job of --queue" },
    queue: { type: "string", value: "<name>", description: "the queue, with --failed" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "jobs retry";
    if (flag(parsed, "failed")) {
      return wholeQueue(parsed, command, "failed", async (tw, queue) => {
        const retried = await tw.jobs.retryFailed(queue);
        return { json: { queue, retried }, text: `${retried} failed job${retried === 1 ? "" : "s"} of queue ${queue} will run again` };
      });
    }
    if (stringOption(parsed, "queue") !== undefined) throw new UsageError("--queue goes with --failed; to retry jobs by id, give only their ids", command);
    return perJob(parsed, command, (tw, id) => tw.jobs.retry(id), (job) => `job ${job.id} (${job.queue}) is pending again`);
  },
};

export const jobsCancelCommand: Command = {
  name: "jobs cancel",
  summary: "cancel pending or running jobs",
  args: "<id>... | --pending --queue <name> [options]",
  description: [
    "Cancels pending or running jobs. A pending job will not run; a running job's outcome is refused, and",
    "its worker sees its signal aborted at the next heartbeat.",
    "With --pending --queue <name>, every pending job of that queue (due or scheduled); running ones go on.",
  ].join("\n"),
  options: {
    pending: { type: "boolean", description: "every pending job of --queue" },
    queue: { type: "string", value: "<name>", description: "the queue, with --pending" },
    ...COMMON,
  },
  async run(parsed) {
    const command = "jobs cancel";
    if (flag(parsed, "pending")) {
      return wholeQueue(parsed, command, "pending", async (tw, queue) => {
        const cancelled = await tw.jobs.cancelPending(queue);
        return { json: { queue, cancelled }, text: `${cancelled} pending job${cancelled === 1 ? "" : "s"} of queue ${queue} cancelled` };
      });
    }
    if (stringOption(parsed, "queue") !== undefined) throw new UsageError("--queue goes with --pending; to cancel jobs by id, give only their ids", command);
    return perJob(parsed, command, (tw, id) => tw.jobs.cancel(id), (job) => `job ${job.id} (${job.queue}) cancelled`);
  },
};

/**
 * An action on every job of `--queue` in some state (`--<flag> --queue <name>`): the queue is
 * required, ids are not taken, and the queue must be known to the config or the store.
 */
async function wholeQueue(parsed: Parsed, command: string, flagName: string, operate: (tw: Tickwork, queue: string) => Promise<{ json: object; text: string }>): Promise<number> {
  noPositionals(parsed, command);
  const queue = stringOption(parsed, "queue");
  if (queue === undefined) throw new UsageError(`--${flagName} needs --queue <name>`, command);
  const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "operate" });
  try {
    checkQueue(session.tw, queue, command);
    const done = await operate(session.tw, queue);
    if (flag(parsed, "json")) printJson(done.json);
    else print(done.text);
    return EXIT_OK;
  } finally {
    await session.close();
  }
}

/** Applies `operate` to each id in turn; one that fails is reported and the rest still run. */
async function perJob(parsed: Parsed, command: string, operate: (tw: Tickwork, id: string) => Promise<Job>, done: (job: Job) => string): Promise<number> {
  const ids = positionals(parsed, command, "job ids: give one or more, e.g. 42", 1, Number.POSITIVE_INFINITY);
  checkIds(ids, command, "job ids");
  const session = await openSession(parsed, { command, config: await configOf(parsed, command, "optional"), purpose: "operate" });
  try {
    const results: ({ id: string; ok: true; job: Job } | { id: string; ok: false; code: string | null; error: string })[] = [];
    const failures: unknown[] = [];
    for (const id of ids) {
      try {
        const job = await operate(session.tw, id);
        results.push({ id, ok: true, job });
        if (!flag(parsed, "json")) print(done(job));
      } catch (error) {
        failures.push(error);
        const code = (error as { code?: unknown }).code;
        results.push({ id, ok: false, code: typeof code === "string" ? code : null, error: messageOf(error) });
        if (!flag(parsed, "json")) note(`tickwork: ${messageOf(error)}`);
      }
    }
    if (flag(parsed, "json")) printJson(results);
    // The ids are checked before the store is opened; an input error here is still the caller's.
    if (failures.some(isInputError)) return EXIT_USAGE;
    return results.every((r) => r.ok) ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await session.close();
  }
}

/** A queue is known when the config declares it or the database holds jobs of it. */
export function checkQueue(tw: Tickwork, queue: string, command: string): void {
  const known = tw.status().queues.map((q) => q.name);
  if (!known.includes(queue)) throw new UsageError(`unknown queue "${queue}": no config declares it and the database has no job of it (queues: ${known.join(", ") || "none"})`, command);
}

/** Ids are PostgreSQL bigints: a larger one would come back from the server as an error of its own. */
function checkIds(ids: string[], command: string, what: string): void {
  const bad = ids.filter((id) => !JOB_ID.test(id) || BigInt(id) > MAX_ID);
  if (bad.length) throw new UsageError(`${what}: expected job ids (integers from 1 to ${MAX_ID}), got ${bad.map((b) => `"${b}"`).join(", ")}`, command);
}
