// The core: runs unchanged in Node and in workerd. Stores live in `tickwork/sqlite` and `tickwork/postgres`.
export { createTickwork, Tickwork, type TickworkOptions, type TickResult } from "./tickwork.js";
export { systemClock, type Clock, type TimerHandle } from "./core/clock.js";
export { toMs, type Duration } from "./core/duration.js";
export { exponential, schedule, type Backoff, type BackoffPolicy, type ExponentialOptions, type Jitter } from "./core/backoff.js";
export { Logger, jsonLines, pinoSink, functionSink, type LogEvent, type LogLevel, type LogSink, type LoggerOption, type PinoLike } from "./core/logger.js";
export type { TracerLike, SpanLike, SpanOptionsLike, SpanContextLike, TraceStateLike } from "./core/tracing.js";
export {
  TickworkError,
  InvalidInputError,
  InvalidDurationError,
  InvalidPayloadError,
  StoreUnavailableError,
  RetryAfterError,
} from "./core/errors.js";
export { Queue } from "./queue/queue.js";
export { Jobs, type ListFilter } from "./queue/jobs.js";
export {
  UnknownQueueError, JobNotFoundError, JobStateError, PermanentJobError, JobAbortedError, LimiterTimeoutError,
  SnoozeError, SnoozeLimitError, ResultTooLargeError, JobWaitTimeoutError, JobFailedError,
} from "./queue/errors.js";
export type { WaitOptions } from "./queue/waits.js";
export type { FlowSpec, FlowChild, FlowJob } from "./queue/flows.js";
export type { BatchOptions, BatchJobs } from "./queue/queues.js";
export { Limiter, type LimiterState, type RateOptions } from "./queue/limiter.js";
export { QueueControls, type QueueFlowStatus, type BucketStatus } from "./queue/controls.js";
export type { RateGate } from "./core/rate-gate.js";
export type { Job, JobStatus, JobContext, JobHandler, BatchHandler, BatchContext, EnqueuedJob, JobAttempt, ChildResult } from "./queue/job.js";
export { Snooze } from "./queue/job.js";
export type { QueueOptions, BatchQueueOptions, EnqueueOptions, EnqueueItem } from "./queue/options.js";
export type { QueueStore, QueueCounts, SqlClient, ClaimHold, GroupCounts } from "./queue/store.js";
export type { Store } from "./store/store.js";
export { TaskAbortedError } from "./schedule/errors.js";
export type { TaskOptions, TaskContext, TaskRun, TaskStatus, RunRecord, RunResult, TaskOutcome } from "./schedule/task.js";
export type { ScheduleStore } from "./schedule/store.js";
export { Cache, type CacheEntry } from "./cache/cache.js";
export type { CacheStore } from "./cache/store.js";
export { Idempotency, type RunOptions as IdempotencyRunOptions, type IdempotencyOptions, type IdempotencyContext } from "./idempotency/idempotency.js";
export { DuplicateRequestError, IdempotencyKeyReuseError, IdempotencyClaimLostError, type StoredOutcome } from "./idempotency/errors.js";
export type { IdempotencyStore, IdempotencyRecord } from "./idempotency/store.js";
// http: a typed fetch wrapper with retries, per-attempt timeouts and rate-limit headers.
export {
  createHttpClient,
  HttpClient,
  type HttpClientOptions,
  type HttpResponse,
  type RequestOptions as HttpRequestOptions,
  type RetryOptions as HttpRetryOptions,
  type ApiKey as HttpApiKey,
  type Schema as HttpSchema,
  type QueryValue as HttpQueryValue,
  type FetchLike,
} from "./http/client.js";
export { HttpRequestError, HttpError, RateLimitedError, HttpTimeoutError, HttpNetworkError, HttpSchemaError, type HttpFailure, type HttpStatusFailure, type SchemaIssue } from "./http/errors.js";
export { parseRateLimit, type RateLimit, type RateLimitWindow } from "./http/rate-limit.js";
export { parseRetryAfter, requestIdOf } from "./http/headers.js";
// delivery: batched callbacks with a per-tick budget, persisted retries, dead letters and replay.
export { Delivery, type EmitResult, type EmitFromResult, type DeliveryPass, type DeliveryStatus } from "./delivery/delivery.js";
export type { DeliveryOptions, DeliveryItem, DeliveryMessage, SendContext, Send } from "./delivery/options.js";
export type { DeliveryStore, DeliveryRow, DroppedRow, DeliveryCounts, DeliveryOutcomes } from "./delivery/store.js";
export { keyset } from "./delivery/keyset.js";
export { webhookSender, verifyWebhook, type WebhookSenderOptions, type VerifyOptions } from "./delivery/webhooks.js";
export { WebhookVerificationError, WebhookResponseError } from "./delivery/errors.js";
// fan-out: one state pushed to groups of targets, retried, reconciled; and the receiving side.
export { Fanout, type FanoutStatus, type FanoutTargetStatus, type FanoutPass } from "./fanout/fanout.js";
export { EmptyStateError } from "./fanout/errors.js";
export type { FanoutOptions, FanoutGroup, FanoutTarget, PushContext, PushSend } from "./fanout/options.js";
export type { FanoutStore } from "./fanout/store.js";
export type { ReconcileChooser, ReconcileContext, ReconcileOption, ReconcilePlan } from "./fanout/reconcile.js";
export { FanoutReceiver, fanoutReceiver, type ReceiverOptions, type ReceiverStorage, type StateSource } from "./fanout/receiver.js";
export { CallTimeoutError, MissingPeerError } from "./core/errors.js";
// notify: operators told of what needs a person, on Slack, Discord or a signed webhook, through delivery outboxes.
export { Notifier, type NotifierStatus, type NotifySinkStatus } from "./notify/notifier.js";
export { webhookSink, slackSink, discordSink, type NotifySink, type WebhookSink, type SlackSink, type DiscordSink, type WebhookSinkOptions, type SlackSinkOptions, type DiscordSinkOptions } from "./notify/sinks.js";
export { DEFAULT_NOTIFY_EVENTS, type NotifyOptions } from "./notify/options.js";
export type { Notification } from "./notify/notification.js";
export type { HeldBack } from "./notify/text.js";
// The `tickwork` command line: the type of a config file (`tickwork.config.ts`).
export { defineConfig, type TickworkConfig, type ConfigSetup, type ConfigContext, type ConfigDatabase, type ConfigTeardown, type ConfigEngineOptions } from "./cli/define-config.js";
