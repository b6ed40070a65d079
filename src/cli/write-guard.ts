import type { Store } from "../store/store.js";

/**
 * What a store may still do while its writes are refused: its reads, and the rows the engine keeps
 * for what is declared (a task's schedule row, a fan-out's row), which `status` needs to say when a
 * task runs next. Listed rather than guessed from names: an operation added to a store later is
 * refused until someone decides it only reads.
 */
const ALLOWED: Readonly<Record<string, ReadonlySet<string>>> = {
  store: new Set(["schemaVersion", "close"]),
  queue: new Set(["get", "list", "countByStatus", "countHeld", "bucketStates", "pauses", "groupCounts", "nextWakeAt"]),
  schedule: new Set(["ensureTasks", "loadTasks", "pausedUntil", "history"]),
  cache: new Set(["get"]),
  idempotency: new Set(["find", "findByKey", "list"]),
  delivery: new Set(["listOutstanding", "listDropped", "getItem", "counts", "nextAt"]),
  fanout: new Set(["ensure", "get", "loadTargets"]),
};
const MODULES = Object.keys(ALLOWED).filter((name) => name !== "store");

/** The writes a config's setup is likeliest to attempt, in the words of the API it called. */
const CALLED: Readonly<Record<string, string>> = {
  "queue.insertMany": "an enqueue",
  "queue.insertSliced": "an enqueue",
  "queue.setPaused": "a queue pause or resume",
  "queue.retry": "a job retry",
  "queue.retryFailed": "a job retry",
  "queue.cancel": "a job cancel",
  "queue.cancelPending": "a job cancel",
  "schedule.setPausedUntil": "a task pause",
  "schedule.setTaskPause": "a task pause",
  "delivery.insertMany": "a delivery emit",
  "delivery.purgeDropped": "a dead-letter purge",
  "fanout.saveState": "a fan-out push",
  "cache.put": "a cache write",
};

/** A store operation that would have written while writes were refused; nothing was written. */
export class WriteRefused extends Error {
  /** As "an enqueue (queue.insertMany)". */
  readonly operation: string;

  constructor(operation: string) {
    const called = CALLED[operation];
    const described = called ? `${called} (${operation})` : operation;
    super(`the database is read-only here: ${described} was refused`);
    this.name = "WriteRefused";
    this.operation = described;
  }
}

export interface WriteGuard {
  /** The store to give the engine: the real one, with every write checked against `refusing`. */
  store: Store;
  /** While true, every operation that may write rejects with WriteRefused before it reaches the database. */
  refusing: boolean;
}

/**
 * Wraps a store so that its writes can be refused: the command line runs a config's `setup`, and the
 * read-only commands, with writes refused, so that `tickwork jobs list` cannot enqueue a job however
 * the config is written. A Proxy, because the store's modules are captured by the engine when it is
 * created and must stay guarded after that.
 */
export function guardWrites(store: Store): WriteGuard {
  const guard: WriteGuard = { store, refusing: false };
  const wrap = <T extends object>(target: T, module: string): T =>
    new Proxy(target, {
      get(object, property, receiver) {
        if (module === "store" && typeof property === "string" && MODULES.includes(property)) return modules.get(property);
        const value: unknown = Reflect.get(object, property, receiver);
        if (typeof value !== "function") return value;
        // Bound to the real object: stores may keep private fields, which a proxy as `this` cannot reach.
        const method = (value as (...args: unknown[]) => unknown).bind(object);
        if (typeof property !== "string" || ALLOWED[module]!.has(property)) return method;
        const operation = module === "store" ? property : `${module}.${property}`;
        // Every store operation is async: a refusal is a rejection, as the database's own errors are.
        return (...args: unknown[]) => (guard.refusing ? Promise.reject(new WriteRefused(operation)) : method(...args));
      },
    });
  const modules = new Map(MODULES.map((name) => [name, wrap(store[name as keyof Store] as object, name)]));
  guard.store = wrap(store, "store");
  return guard;
}
