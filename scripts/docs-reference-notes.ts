/**
 * The words the code cannot give the generated reference: when each event is emitted, and a line for
 * the error classes that carry no doc comment, and the options that carry none. The names, levels, fields, codes and classes come from
 * src/ (scripts/docs-reference.ts); a note for an event or class that no longer exists fails the
 * generator, and an event without a note is listed as undescribed, so the two cannot drift apart.
 */

/** When each event is emitted, by its name. */
export const EVENT_NOTES: Record<string, string> = {
  "engine.started": "the engine is created; names its sink (`logSink`, `logSinkChosenBy`) so logs never silently go somewhere else; written whatever the log level",
  "engine.workers_started": "`tw.start()` started the workers",
  "engine.stopped": "`tw.stop()` finished",

  "job.enqueued": "every enqueue (off at the default level)",
  "job.started": "an attempt starts (off at the default level)",
  "job.succeeded": "an attempt succeeded, with `durationMs` (off at the default level, counted by `/metrics` all the same)",
  "job.retry_scheduled": "an attempt failed and the job will run again at `retryAt`",
  "job.failed": "the last attempt failed: the job is `failed` (dead), its error kept",
  "job.lease_expired": "a dead worker's job was rescued after its lease lapsed (one it held but never started is `pending` again, `attempts` as before its claim)",
  "job.lease_lost": "this worker lost a job's lease; its `ctx.signal` is aborted",
  "job.outcome_refused": "a stale outcome was fenced off: the job is no longer running this attempt here",
  "job.released": "a job handed back, pending again at once and its attempt not counted: prefetched at a stop (`reason`: shutdown) or at a pause of its queue or group in any process (paused), prefetched past its lease while the process stalled (lease_lapsed: never started here, another worker may hold it), or still running when the shutdown grace ran out (shutdown)",
  "job.retried": "`tw.jobs.retry` or `retryFailed` moved jobs back to pending",
  "job.cancelled": "`tw.jobs.cancel` (`id`), or `cancelPending` cancelled a queue's pending jobs (`count`)",
  "job.promoted": "`tw.jobs.promote` made a job scheduled for later due now",
  "job.deleted": "`tw.jobs.delete` deleted a finished job before its retention would",
  "job.snoozed": "a handler snoozed its job (`SnoozeError`, `ctx.snooze`, an upstream's 429): back at `runAt`, no attempt spent",
  "job.progress_refused": "a `ctx.progress` value was not JSON or over the queue's `maxResultBytes`: not written, the job goes on",
  "flow.enqueued": "`queue.enqueueFlow` or `tw.batch` wrote a flow of `jobs` jobs whose root is `id`",
  "job.on_failed_error": "a queue's `onFailed` hook threw",
  "counts.compacted": "the pruner tidied the job counters: those of queues with no job left dropped, those of PostgreSQL connections that are gone folded into one",
  "jobs.pruned": "finished jobs past their retention were deleted",
  "limits.pruned": "idle shared-budget rows (full, unpaused, for an hour) were deleted",

  "queue.paused": "`tw.queues.pause` (a whole queue, or one `group`)",
  "queue.resumed": "`tw.queues.resume`",
  "queue.throttled": "a limit starts holding this process's worker back (`by`: `paused`, `globalConcurrency`, `groupConcurrency`, `rateLimit`, `groupRateLimit`)",
  "queue.unthrottled": "the limit named in `was` stopped holding the worker back",
  "queue.limited_claim": "a limited queue's claim, with each started job's wait since it was due (`waitedMs`)",

  "limiter.paused": "a named limiter was paused for every process, by an upstream's 429 or rate-limit headers, or by hand",
  "limiter.resumed": "a named limiter was resumed",
  "limiter.waiting": "`acquire` waits for a token (once per call)",

  "task.started": "a run starts (off at the default level)",
  "task.succeeded": "a run succeeded",
  "task.failed": "a run failed; `consecutiveFailures` counts them",
  "task.backoff": "a run backed off (`ctx.backoffUntil` or an error with `retryAfter`): skipped until `nextRunAfter`, not a failure",
  "task.missed": "slots were missed while nothing ran; they collapse into one run",
  "task.overlap_skipped": "a slot came due while the previous run was still going",
  "task.run_taken_over": "a run whose process died (its lease lapsed) was taken over here",
  "task.lease_lost": "this process lost a run's lease; the run's signal is aborted",
  "task.outcome_refused": "a run frozen past its lease finished after another process took it over; its outcome does not count",
  "task.breaker_opened": "a task paused after `breaker.after` consecutive failures, until `resume()`",
  "task.schedule_failed": "a task's cadence could not be computed (`TW_TASK_CADENCE`), logged once; retried after a minute",
  "task.schedule_recovered": "a task whose cadence had failed computes again",
  "scheduler.paused": "`tw.scheduler.pauseUntil` (every task, or one)",
  "scheduler.resumed": "`tw.scheduler.resume` ends pauses and closes breakers",

  "delivery.emitted": "items written to the outbox (off at the default level, counted by `/metrics`)",
  "delivery.not_ready": "`emitFrom`'s `ready` said the source is not complete yet: nothing was read",
  "delivery.carried": "a pass used its whole budget; the rest goes in the next tick, 100 ms later",
  "delivery.failed": "a send failed; retried at `retryAt`",
  "delivery.retried": "a retry was delivered",
  "delivery.dropped": "the retry schedule ran out: the item is in the dead-letter table",
  "delivery.replayed": "dropped items were sent again (`replay`)",
  "delivery.on_delivered_failed": "a delivery's `onDelivered` hook threw",

  "fanout.state_changed": "a push saved a new version of the state",
  "fanout.converged": "every target has the current version",
  "fanout.reconciled": "a reconciliation round re-pushed the state to every target",
  "fanout.push_failed": "a push to one target failed",
  "fanout.retry_scheduled": "a round had failures; its retry time on the backoff",
  "fanout.reconcile_after_task": "a reconciliation was scheduled after the run of the task named in `reconcile: { after }`",
  "fanout.reconcile_plan_failed": "a `reconcile` function threw; 15 minutes is used",

  "idempotency.replayed": "a completed key returned its stored result without running (off at the default level)",
  "idempotency.released": "the operation threw or returned a failure: the claim is deleted so the client may retry with the key",
  "idempotency.reclaimed": "a claim not renewed for `staleAfter` (a crashed or frozen owner) was taken over",
  "idempotency.claim_lost": "this execution's claim was taken over while it ran; its signal is aborted and its result discarded",
  "idempotency.pruned": "expired keys were deleted",

  "http.retry": "an attempt failed (network, timeout, 429 or a retried 5xx) and will be retried after `delayMs`",
  "http.rate_limited": "a response reported its rate-limit budget spent",
  "http.failed": "a request failed for good; the typed error is thrown",

  "store.error": "a store call failed in the background (it is retried; a job's outcome, `retrying` of them, until the job's lease ends)",

  "server.listening": "`serve()` is listening, with its URL",
  "server.auth_failed": "a wrong token (never logged); repeats are counted, one line a minute with `repeated` and `intervalMs`",
  "server.error": "a request failed unexpectedly (answered 500; the details are here, not in the response)",

  "alarm.armed": "a Durable Object's first call armed its alarm",
  "alarm.tick": "an alarm ran one tick (off at the default level)",
  "alarm.failed": "a transport failure (the storage, a missing binding) made `alarm()` throw, so the platform retries it",
  "alarm.retries_exhausted": "on the platform's last retry the object re-armed its alarm at the ceiling instead of throwing",
  "alarm.rearmed": "the watchdog found the alarm missing (lost) or stuck in the past and set it for now",
};

/** One line for error classes without a doc comment of their own, by class name. */
export const ERROR_NOTES: Record<string, string> = {
  InvalidDurationError: "A duration that is not milliseconds (a finite number from 0 to 100 years) or a string such as \"500ms\", \"30s\", \"5m\", \"1h\", \"2d\".",
  InvalidPayloadError: "A payload, result or state that is not JSON-serialisable (functions, symbols, BigInt, cycles, `undefined`, `NaN`, `Infinity`, and `Map`, `Set`, `Error`... values); the message names the path.",
};

/** Words for options whose declaration has no doc comment, by `Type.option` (nested: `Type.retry.backoff`). */
export const OPTION_NOTES: Record<string, string> = {
  "TickworkOptions.store": "`sqlite(path)` from `tickwork/sqlite`, or `postgres(url | { url, schema, pool, max })` from `tickwork/postgres`.",
  "TickworkOptions.logger": "`(event) => void`, a pino instance, or a sink such as `jsonLines()`; default `jsonLines()` to the console. The engine names its sink in `engine.started`.",
  "TickworkOptions.logLevel": "`debug`, `info`, `warn`, `error` or `critical`.",
  "TickworkOptions.onError": "Called with a store error that a background pass (maintenance, a fan-out after a task) logged as `store.error`.",
  "TickworkOptions.clock": "Default: the system clock; `fakeClock()` from `tickwork/testing` in tests.",
  "QueueOptions.handler": "`async (job, ctx) => result`; a throw fails the attempt. Without one, this process only enqueues (a producer process).",
  "QueueOptions.onFailed": "`(job, error) => void`, once a job is recorded `failed` (best effort: a crash in between skips it).",
  "QueueOptions.group": "`(payload) => key`, or `true` when every enqueue names its `group` (1-255 characters): the queue is grouped.",
  "QueueOptions.retry.backoff": "`exponential(...)`, `schedule([...])` or `(failures) => ms | null`. Default: `exponential({ base: \"1s\", factor: 2, max: \"1h\", jitter: \"equal\" })`.",
  "TaskOptions.run": "`async (ctx) => result`; the result is kept as `lastResult`.",
  "TaskOptions.every": "A duration: slots are absolute times (`every: \"5m\"` runs at :00, :05... UTC). Give exactly one of `every` and `cron`.",
  "TaskOptions.cron": "A cron expression (croner), e.g. `\"*/15 * * * *\"`; one with no run after its definition is refused.",
  "DeliveryOptions.send": "`(message, ctx) => Promise`: a throw, or a timeout, fails the send and it is retried on `retry`.",
  "DeliveryOptions.onDelivered": "Called with each message once it is sent (seed 000: advance the row's `daily_date`).",
  "FanoutOptions.groups": "Group name to `{ targets, project? }`: `targets` an array of ids (or objects with an `id`), or a function returning them, read at each round; `project(state)` is the group's view of the state (default: the state).",
  "FanoutOptions.send": "`(target, payload, ctx) => Promise`: one push of the group's projection to one target; `ctx` has `group`, `version`, `signal`, `now`, `logger`.",
  "FanoutOptions.state": "Reads the current state for retries and reconciliation (e.g. the enabled symbols, from their table); default the last pushed state. An empty one is refused there too.",
  "FanoutOptions.isEmpty": "Which states are refused as empty; default `null`, `[]` and `{}`.",
  "FanoutOptions.reconcile": "When the current state is re-pushed to every target as a safety net: a duration (default `\"15m\"`), `false`, `{ after: \"<task>\" }` (after each run of that periodic task), or a function `(ctx) => plan` returning one of those, asked at the end of each round and after each task run.",
  "FanoutOptions.backoff": "Default: `schedule([\"30s\", \"1m\", \"2m\", \"5m\", \"15m\"])`.",
  "ReceiverOptions.storage": "`{ load(), save(state) }`: where the receiver keeps the last pushed state durably (a Durable Object's storage, a file).",
  "ReceiverOptions.isEmpty": "Which states are refused as empty; default `null`, `[]` and `{}`.",
  "IdempotencyKeyOptions.idempotency": "`tw.idempotency`.",
  "VerifyOptions.secret": "The `whsec_...` secret the sender signs with.",
  "TickworkConfig.engine": "`createTickwork` options, except `store`, `clock`, `migrate` and `handleSignals`.",
  "TickworkConfig.setup": "`async (tw, { database, command, purpose }) => teardown?`: runs after queues and tasks are declared, under every command, for what needs the engine itself or the app's own connections; `database` is `{ kind: \"sqlite\", path } | { kind: \"postgres\", url, schema }`, from `--db`. `purpose` is `\"serve\"` (`start`), `\"operate\"` (a command that changes something) or `\"inspect\"` (a read-only command): only under `\"serve\"` may setup write to tickwork's database, elsewhere a write is refused and the command exits 2 ([what setup may do](../../operations/cli.md#what-setup-may-do-contextpurpose)). The teardown runs once the engine has stopped.",
  "TickworkObjectConfig.logger": "`{ binding: \"LOGS\", appId }` sends events to a Workers RPC logging service; `\"console\"` writes JSON lines to the console; any sink the engine takes also works.",
  "TickworkObjectConfig.engine": "Engine options: `instanceId`, `retention`, `idempotency`, `onError`.",
  "TickworkObjectConfig.cache.prefix": "Prefixed to every key (several caches in one namespace); default none.",
  "TickworkObjectConfig.cache.expireAfter": "KV deletes an entry this long after it was written (KV's own minimum is 60s); default: kept until overwritten.",
};

/** What each admin route does, by `METHOD /path`; a route without a note shows its doc comment in src/server. */
export const ROUTE_NOTES: Record<string, string> = {
  "GET /healthz": "200 while the process serves",
  "GET /readyz": "200 when the store answers and its schema is the one this code expects (`{ status: \"ready\", schema: { current, latest } }`); 503 otherwise, with the reason",
  "GET /metrics": "the Prometheus text format ([metrics](metrics.md)); behind the token like any read, unless `auth: \"writes\"`",
  "GET /api/overview": "everything the dashboard shows, in one response",
  "GET /api/queues": "every queue declared here or with jobs in the store, with counts by status and its pending jobs split into due now and scheduled later (`pending`: `due`, `scheduled`, `oldestDueAt`; the scheduled ones counted on the claim index, never the backlog)",
  "POST /api/queues/:queue/retry-failed": "every failed job of the queue; `{ retried }`",
  "GET /api/jobs": "`?queue=&status=&due=&key=&parent=&id=&order=&before=&after=&limit=`: newest first, or oldest first with `order=oldest`, 50 (up to 500) a page, `{ jobs, order, next, now }`; `next` is the last id shown, the next page's `before` (newest first) or `after` (oldest first), null on the last page; the other cursor is a 400 naming it; `due=true` (pending jobs due now) or `false` (scheduled for later); `parent` a flow parent's (or batch completion job's) direct children; `id` gives that job if it passes the other filters; each job carries `payloadPreview` (its first 200 characters), `payloadChars` and `payloadTruncated` instead of the payload, and `children` (`{ total, pending, failed }` for a flow parent or a batch completion job, null otherwise: a pending parent with children not ended waits for them)",
  "GET /api/jobs/:id": "one job, `{ job, now }`: attempts with their times and errors, last error, result, progress, times, `lease` (`{ workerId, until }` while it runs: the worker `<instanceId>/<queue>` and when its lease lapses unless renewed; null otherwise); the payload itself up to 64 Ki characters of JSON, past that `payloadTruncated: true` and its first 64 Ki characters as `payloadPreview`",
  "GET /api/jobs/:id/payload": "the job's whole payload, as JSON",
  "POST /api/jobs/:id/retry": "as `tw.jobs.retry`, `{ job, now }`; 409 when the job's status forbids it",
  "POST /api/jobs/:id/cancel": "as `tw.jobs.cancel`, `{ job, now }`; 409 when the job's status forbids it",
  "POST /api/jobs/:id/promote": "as `tw.jobs.promote`: a pending job scheduled for later is due now, `{ job, now }`; 409 when it is not pending",
  "POST /api/jobs/:id/delete": "as `tw.jobs.delete`: a finished job (succeeded, failed, cancelled) is deleted, `{ job, now }` with the job as it was; 409 when it is pending or running, 404 when there is no such job",
  "POST /api/limiters/:limiter/pause": "`{ \"for\": \"90s\" }` or `{ \"until\": <epoch ms or ISO time> }`: no token is given until then, in every process (as after an upstream's 429)",
  "GET /api/tasks": "`tw.scheduler.status()`",
  "POST /api/tasks/:task/run": "`:task` is a task or `all`: runs it now and returns the results",
  "POST /api/tasks/:task/pause": "`{ \"until\": \"2h\" }`; `:task` is a task or `all`; `until` is epoch ms, an ISO time or a duration from now",
  "POST /api/tasks/:task/resume": "`:task` is a task or `all`: ends pauses, closes breakers",
  "GET /api/deliveries": "each delivery's pending, retrying and dropped counts, next send, last pass against its budget",
  "GET /api/deliveries/:delivery/retrying": "the outbox's items waiting for a retry, in keyset pages (`?after=&limit=`)",
  "GET /api/deliveries/:delivery/pending": "the outbox's items waiting for their first send, in keyset pages (`?after=&limit=`)",
  "GET /api/deliveries/:delivery/dropped": "the dead-letter table, in keyset pages (`?before=&limit=`)",
  "GET /api/deliveries/:delivery/items/:id": "one outstanding or dropped item with its whole payload (lists carry previews)",
  "POST /api/deliveries/:delivery/replay": "`{ \"id\": \"...\" }` or `{ \"since\": \"1h\" }`: send dropped items again, with their ids",
  "GET /api/fanouts": "each fan-out's version, targets behind with their errors, next round",
  "POST /api/fanouts/:fanout/reconcile": "push the state to every target now",
  "GET /api/idempotency": "`?scope=&before=&limit=`: a scope's idempotency keys, newest first, with their results (keyset pages, opaque `next`)",
};
