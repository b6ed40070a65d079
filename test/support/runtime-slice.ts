/**
 * The contract suites that Node 22 and 24, Bun and Deno run (.ci/node-versions.sh, .ci/bun-deno.sh).
 * Node 20 (`npm test`) runs every contract suite; a runtime repeats only what can differ by runtime:
 * its SQLite driver (node:sqlite, bun:sqlite) executing each family of the stores' statements, its
 * JSON, numbers and typed arrays through those drivers, its timers, AbortSignal, crypto and HTTP.
 * Each file below is here for one of those, named beside it, so a regression of the runtime in any of
 * them still fails; the rest of a contract area adds cases of the same statements and is left to Node 20.
 */
const contract = (area: string, files: readonly string[]) => files.map((f) => `test/contract/${area}/${f}.test.ts`);

export const RUNTIME_CONTRACT_SLICE: readonly string[] = [
  ...contract("queue", [
    "enqueue-returns-jobs-and-dedupes-keys", // insert, batch insert, key conflicts
    "a-payload-of-any-length-comes-back-whole-through-every-path", // JSON and text through the driver
    "a-retry-time-out-of-range-or-fractional-is-stored-within-the-stores-range", // the driver's number range
    "rescues-expired-leases-and-fences-stale-outcomes", // heartbeat, rescue, fenced settle
    "retries-on-the-backoff-then-fails", // settle: retry and fail
    "times-out-an-attempt-and-aborts-its-signal", // timers and AbortSignal
    "job-counts-are-kept-by-every-write-and-read-without-the-jobs-table", // the count triggers
    "jobs-api-gets-lists-counts-retries-and-cancels", // the admin reads and writes
    "a-flow-parent-runs-once-its-children-ended-and-a-batch-completes-once", // flows and batches
    "a-repeated-key-replaces-debounces-throttles-or-stays-unique-for-a-period", // dedupe modes
    "a-handlers-result-is-stored-and-awaited-from-the-caller", // results and waits
    "prunes-finished-jobs-per-retention",
    "bad-input-writes-nothing",
  ]),
  ...contract("flow", [
    "global-concurrency-shares-slots-among-engines-and-a-dead-engines-slots-count-until-its-hold-lapses", // slot holding
    "group-concurrency-holds-a-group-across-engines-while-other-groups-run", // the grouped claim
    "a-named-limiter-is-one-budget-for-every-engine", // rate buckets
    "a-paused-queue-starts-nothing-in-any-engine-until-resumed",
  ]),
  ...contract("schedule", [
    "two-engines-run-each-slot-exactly-once", // the slot lease
    "runs-every-and-cron-tasks-at-their-slots",
    "takes-over-the-run-of-a-dead-runner-after-its-lease",
    "times-out-a-run-and-aborts-its-signal",
    "reports-status-with-results-and-a-bounded-history",
  ]),
  ...contract("delivery", [
    "retries-and-dead-letters-survive-a-restart",
    "webhooks-are-signed-verified-and-keep-their-id-across-retries", // the runtime's crypto
    "a-pass-writes-its-outcomes-in-a-few-batched-statements",
    "keyset-paging-reads-each-mutated-row-once-where-offset-skips",
  ]),
  ...contract("fanout", [
    "reconciles-every-target-with-the-current-state",
    "retries-on-the-seed-001-backoff-capped-at-15m-only-to-targets-behind",
    "a-new-engine-continues-the-retry-after-a-restart",
  ]),
  ...contract("idempotency", [
    "runs-a-new-key-once-and-replays-its-cached-result",
    "a-stale-claim-is-reclaimed-but-never-while-its-owner-renews-it",
    "keys-expire-after-the-ttl-and-are-pruned",
    "the-idempotency-key-header-answers-400-for-a-request-it-cannot-key-and-the-stored-response-to-a-loser", // the runtime's Request
  ]),
  ...contract("cache", ["stores-values-with-fetched-at-and-expires-by-max-age", "values-survive-a-reopen"]),
  ...contract("db", ["a-transaction-commits-all-its-statements-or-rolls-every-one-back"]),
];
