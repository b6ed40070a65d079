import { inject } from "vitest";
import { InvalidInputError, TickworkError } from "../../../src/core/errors.js";
import { JobStateError } from "../../../src/queue/errors.js";
import { SqliteQueueStore } from "../../../src/queue/store/sqlite.js";
import { DURABLE_OBJECT_MAX_PAYLOAD_BYTES } from "../../../src/runtime/cloudflare/store.js";
import type { Store } from "../../../src/store/store.js";
import type { StoreAnswer, StoreRequest } from "../fixtures/store-host.js";

/** Every module of a store: each one's operations are forwarded to the Durable Object. */
type ModuleName = Exclude<keyof Store, "name" | "migrate" | "schemaVersion" | "subscribe" | "subscribeJobs" | "close">;
const MODULES = { queue: true, schedule: true, cache: true, idempotency: true, delivery: true, fanout: true } satisfies Record<ModuleName, true>;

let workerd: Promise<string> | undefined;

/** The address of the run's workerd (asked once per test process). */
function workerdUrl(): Promise<string> {
  const locator = inject("storeHostUrl");
  if (!locator) throw new Error("the Durable Object store host is not running: vitest.config.ts must list test/cloudflare/support/store-host-server.ts in globalSetup");
  workerd ??= fetch(locator).then(async (res) => {
    if (!res.ok) throw new Error(await res.text());
    return res.text();
  });
  return workerd;
}

/**
 * A store whose every operation runs in the Durable Object `objectName`, on the real Durable Object
 * store over workerd's SQLite (the run's one workerd: store-host-server.ts). Store operations take
 * plain data, times included, so the engine and its fake clock run here unchanged and only the
 * operation crosses, as JSON: what a store returns is plain data too.
 */
export function remoteStore(objectName: string): Store {
  const send = (call: StoreRequest) => sendTo(objectName, call);
  const forward = (module: ModuleName) =>
    new Proxy(
      {},
      {
        // Not a thenable: `await store.queue` must not become a store call.
        // The queue's payload ceiling is a property of the object's store, not an operation.
        get: (_target, method) =>
          module === "queue" && method === "maxPayloadBytes" ? DURABLE_OBJECT_MAX_PAYLOAD_BYTES
          : typeof method !== "string" || method === "then" ? undefined
          // An optional operation the object's queue store lacks (insertSliced) is absent here too.
          : module === "queue" && !(method in SqliteQueueStore.prototype) ? undefined
          : (params: unknown) => send({ op: "call", module, method, params }),
      },
    );
  const modules = Object.fromEntries(Object.keys(MODULES).map((m) => [m, forward(m as ModuleName)])) as Pick<Store, ModuleName>;
  return {
    name: `durableObject(${objectName})`,
    ...modules,
    migrate: async () => void (await send({ op: "migrate" })),
    schemaVersion: async () => (await send({ op: "schemaVersion" })) as { current: number; latest: number },
    close: async () => {},
  };
}

/** test/support/transaction-facts.ts, run in the Durable Object `objectName` on its SQL seam. */
export function remoteTransactionFacts(objectName: string): Promise<unknown> {
  return sendTo(objectName, { op: "transactionFacts" });
}

async function sendTo(objectName: string, call: StoreRequest): Promise<unknown> {
  const response = await fetch(await workerdUrl(), { method: "POST", body: JSON.stringify({ ...call, object: objectName }) });
  const answer = (await response.json()) as StoreAnswer;
  if (answer.ok) return answer.value;
  throw rebuilt(answer.error);
}

/** An error from the object, as the caller would have had it from a local store. */
function rebuilt(error: { name: string; message: string; code?: string }): Error {
  if (error.name === "InvalidInputError") return new InvalidInputError(error.message, error.code);
  if (error.name === "JobStateError") return new JobStateError(error.message);
  if (error.code) return Object.assign(new TickworkError(error.code, error.message), { name: error.name });
  return Object.assign(new Error(error.message), { name: error.name });
}
