// The admin server: JSON API, dashboard, /metrics, /healthz and /readyz over a tickwork engine.
// `adminApp` and `serve` are for Node; `createAdminApp` uses web standards only (workerd, later).
export { adminApp, serve, TOKEN_VARIABLE, type AdminOptions, type ServeOptions, type Serving } from "./node.js";
export { createAdminApp, type AdminApp, type AdminAppOptions } from "./app.js";
export { prometheusMetrics, type MetricsExposition, type MetricsOptions } from "./metrics.js";
export type { AuthMode } from "./auth.js";
export type { Overview, QueueSummary, PendingSplit, JobSummary, JobListItem, JobPage, JobDetail, JobAnswer, JobAttemptView, JobPayloadView, PayloadPreview, TaskSummary, ThroughputSnapshot, TaskRunResult, DeliverySummary, DeliveryItemView, FanoutSummary, FanoutTargetView, QueueFlowView, BucketView, GroupView, QueueControlResult, LimiterView } from "./api/types.js";
