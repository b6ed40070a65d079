// tickwork in a Cloudflare Durable Object: the engine on the object's SQLite storage, driven by its alarm.
export { TickworkObject, type DurableObjectContext, type ObjectStatus, type LastTick, type RpcValue, type RunRecordRpc, type TaskStatusRpc, type RunResultRpc, type EnqueuedJobRpc } from "./object.js";
export {
  WORKERS_PAID_SUBREQUESTS,
  DEFAULT_HEADROOM,
  PLATFORM_ALARM_RETRIES,
  type TickworkObjectConfig,
  type LoggerChoice,
  type LogsBindingChoice,
  type ObjectEngineOptions,
} from "./options.js";
export { nextAlarmAt, type AlarmCadence } from "./alarm.js";
export { durableObjectStore, type DurableObjectStoreOptions } from "./store.js";
export { durableObjectExecutor } from "./executor.js";
export { idempotentCall, IdempotencyCall, type ClaimLostListener, type IdempotentObject } from "./idempotent.js";
export { kvCache, type KvCacheOptions } from "./kv-cache.js";
export { workersLogs, type FlushableSink } from "./logs-sink.js";
export type { AlarmInfo, DurableObjectStorageLike, KvNamespaceLike, LogsBinding, LogsEntry, LogsLevel, SqlStorageLike, SqlStorageValue } from "./platform.js";
