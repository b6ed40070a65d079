import type { HandedJobs, QueueStore } from "../queue/store/store.js";
import type { ScheduleStore } from "../schedule/store.js";
import type { CacheStore } from "../cache/store.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { DeliveryStore } from "../delivery/store.js";
import type { FanoutStore } from "../fanout/store.js";

/**
 * A store: one database, with each module's operations on it. The stores are `sqlite(...)` and
 * `postgres(...)` (Node) and, later, the Durable Object store; the engine only ever sees this.
 */
export interface Store {
  /** Names the store in the `engine.started` event and in `status()`, e.g. `sqlite(./tickwork.db)`. */
  readonly name: string;
  readonly queue: QueueStore;
  readonly schedule: ScheduleStore;
  readonly cache: CacheStore;
  readonly idempotency: IdempotencyStore;
  readonly delivery: DeliveryStore;
  readonly fanout: FanoutStore;
  /** Brings the schema to the latest version; safe when many processes start at once. */
  migrate(): Promise<void>;
  /** The schema version in the database, and the latest this code knows. */
  schemaVersion(): Promise<{ current: number; latest: number }>;
  /**
   * Cross-process wake-ups: `onJobs(queue)` is called when another process enqueues, and `onHanded`
   * when it enqueued jobs into the offered slots of a worker (see QueueStore.offers); each is called
   * with `*` when signals may have been missed (a dropped connection); `onPaused(queue, group)` when
   * any process paused a queue (group null) or one of its groups. Stores that cannot notify leave it
   * out, and the engine falls back to a poll interval it announces.
   */
  subscribe?(
    onJobs: (queue: string) => void,
    onHanded?: (handoff: HandedJobs | "*") => void,
    onPaused?: (queue: string, group: string | null) => void,
  ): Promise<() => Promise<void>>;
  /**
   * Signals about awaited jobs (`QueueStore.watch`, `waited` rows) from every process: `onJob(id)`
   * when one ended or reported progress, `onJob("*")` when signals may have been missed (a dropped
   * connection). Stores without notifications leave it out, and waiters poll.
   */
  subscribeJobs?(onJob: (id: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
