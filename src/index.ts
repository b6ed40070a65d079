// The engine, queues and jobs, tasks, the errors a caller catches, durations and backoff: runs
// unchanged in Node and in workerd. Stores live in `tickwork/sqlite` and `tickwork/postgres`; the
// modules the engine also serves in their own subpaths: `tickwork/http`, `tickwork/delivery`,
// `tickwork/fanout`, `tickwork/notify`, `tickwork/cache`, `tickwork/idempotency`.
export { createTickwork, Tickwork, type TickworkOptions, type TickResult } from "./tickwork.js";
export { systemClock, type Clock, type TimerHandle } from "./core/clock.js";
export { toMs, type Duration } from "./core/duration.js";
export { exponential, schedule, type Backoff, type BackoffPolicy, type ExponentialOptions, type Jitter } from "./core/backoff.js";
export { Logger, jsonLines, pinoSink, functionSink, type LogEvent, type LogLevel, type LogSink, type LoggerOption } from "./core/logger.js";
export type { TracerLike } from "./core/tracing.js";
export {
  TickworkError,
  InvalidInputError,
  InvalidDurationError,
  InvalidPayloadError,
  PayloadTooLargeError,
  SchemaMismatchError,
  StoreUnavailableError,
  StoreSetupError,
  RetryAfterError,
  CallTimeoutError,
  MissingPeerError,
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
export { Limiter, type LimiterState, type RateOptions } from "./queue/flow-control/limiter.js";
export { QueueControls, type QueueFlowStatus, type BucketStatus } from "./queue/controls.js";
export type { Job, JobStatus, JobContext, JobHandler, BatchHandler, BatchContext, EnqueuedJob, JobAttempt, ChildResult } from "./queue/job.js";
export { Snooze } from "./queue/job.js";
export type { QueueOptions, BatchQueueOptions, EnqueueOptions, EnqueueItem } from "./queue/options.js";
export type { QueueCounts, SqlClient } from "./queue/store/store.js";
export { TaskAbortedError } from "./schedule/errors.js";
export type { TaskOptions, TaskContext, TaskRun, TaskStatus, RunRecord, RunResult, TaskOutcome } from "./schedule/task.js";
// The `tickwork` command line: the type of a config file (`tickwork.config.ts`).
export { defineConfig, type TickworkConfig, type ConfigDatabase } from "./cli/define-config.js";
