/**
 * The documented windows (docs/operations/reliability.md): when tickwork allows a second execution
 * of the same job, slot or idempotency key. A chaos verdict explains each second execution by one of
 * these causes, checked against the ledger (who was killed or frozen when, what each process
 * logged); a second execution no cause explains is a failure, and so is every lost job, slot or key.
 */

export type Cause =
  /** The earlier execution's process was SIGKILLed after it started and before the re-run. */
  | "killed"
  /**
   * Its process was frozen (SIGSTOP) past the lease while it held the work (running it, or claimed and
   * not yet started); it logged the lease lost or its outcome refused.
   */
  | "frozen past the lease"
  /** Its process lived, but its lease lapsed (pool starved, database unreachable): it logged the lease lost or its outcome refused. */
  | "lease lapsed"
  /** Its process lived and logged a store failure between the execution and the re-run: its outcome (or its heartbeat) was not written. */
  | "store failure";

export const RULES = `Rules (what counts as lost, and when a second execution is inside the documented window):
  lost      a job the producer got an id for that does not end 'succeeded' with a completed execution
            of its accepted attempt in the ledger; a slot of the periodic task that neither ran, nor was
            skipped as an overlap, nor counted as missed by the next run; a killed run of a slot never
            taken over; an idempotency key a caller could not get a result for. Must be 0.
  re-run    a job, slot or key executed again. Allowed only with a later attempt (a job's attempt
            number grows with each claim; two executions of one attempt are a fencing failure, but for
            a job whose start was not yet written when its holder lost it below: its attempt is given
            back) and only when the earlier execution's process
              killed                 was SIGKILLed after the execution started (the reliability docs: a
                                     handler whose outcome was not yet written when its process died
                                     runs again);
              frozen past the lease  was SIGSTOPped while it held the job (running it, or claimed and
                                     not yet started: then it starts it after the thaw) and logged
                                     job.lease_lost or job.outcome_refused for it once thawed (its
                                     completion was refused by the fence);
              lease lapsed           lived, but logged job.lease_lost / job.outcome_refused for it
                                     (heartbeats starved of connections or cut off from the database);
              store failure          lived and logged store.error between the execution and the re-run
                                     (its outcome or heartbeat could not be written: server restarting,
                                     backend terminated, SQLite busy).
            For an idempotency key, the documented takeover: the owner was killed or frozen (also
            between its claim and its operation's start) and its claim went stale (no renewal for
            staleAfter); and every caller that got a result for a key got the same result (two answers
            for one key is a failure).
  recovery  from the fault (kill, freeze, outage start) to the re-run of the work it interrupted.`;
