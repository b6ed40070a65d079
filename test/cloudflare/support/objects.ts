import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import type { LogsEntry } from "../../../src/runtime/cloudflare/platform.js";
import type { RelayedAnswer, RelayedCall } from "../fixtures/rpc-relay.js";
import { COMPATIBILITY_DATE, bundleWorker, fixture } from "./workerd.js";

/** An entry the local worker-logs service received. */
export type LoggedEntry = LogsEntry & { appId: string; context: Record<string, unknown> };

export interface Objects {
  mf: Miniflare;
  /** Calls `method` on the object `object` of `binding`, by Workers RPC from inside workerd. */
  call<T = unknown>(binding: string, object: string, method: string, ...args: unknown[]): Promise<T>;
  /** What the logs service received for `appId` (and the object named `object`, when given), oldest first. */
  logs(appId: string, object?: string): Promise<LoggedEntry[]>;
  dispose(): Promise<void>;
}

/** The classes of fixtures/objects.ts, each bound under its own name in capitals. */
const CLASSES = ["Ticker", "Worker", "Isolated", "Operated", "Fragile", "Exhausted", "KvCached", "Unbound", "Refused", "Unconfigured", "Probe"];

/**
 * workerd with the fixture objects and a local worker-logs service bound as `LOGS`. With `persist`,
 * the objects' storage lives in that directory, so another workerd started on it finds it again.
 */
export async function startObjects(options: { persist?: string; stdio?: (line: string) => void } = {}): Promise<Objects> {
  const [objects, logs] = await Promise.all([bundleWorker(fixture("objects.ts")), bundleWorker(fixture("logs-service.ts"))]);
  const mf = new Miniflare({
    workers: [
      {
        name: "objects",
        modules: true,
        script: objects,
        compatibilityDate: COMPATIBILITY_DATE,
        durableObjects: Object.fromEntries(CLASSES.map((className) => [className.toUpperCase(), { className, useSQLite: true }])),
        kvNamespaces: ["CACHE"],
        serviceBindings: { LOGS: { name: "logs", entrypoint: "LogsRPC" }, REFUSING_LOGS: { name: "logs", entrypoint: "RefusingLogsRPC" } },
      },
      { name: "logs", modules: true, script: logs, compatibilityDate: COMPATIBILITY_DATE },
    ],
    ...(options.persist ? { durableObjectsPersist: options.persist, kvPersist: options.persist } : {}),
    // The workers' console, line by line, for a test that reads it (otherwise workerd's own output).
    ...(options.stdio ? { handleRuntimeStdio: (stdout: Readable, stderr: Readable) => [stdout, stderr].forEach((stream) => createInterface({ input: stream }).on("line", options.stdio!)) } : {}),
  });
  await mf.ready;
  return {
    mf,
    async call<T>(binding: string, object: string, method: string, ...args: unknown[]): Promise<T> {
      const call: RelayedCall = { binding, object, method, args };
      const response = await mf.dispatchFetch("http://objects/rpc", { method: "POST", body: JSON.stringify(call) });
      const answer = (await response.json()) as RelayedAnswer;
      if (!answer.ok) throw Object.assign(new Error(answer.error.message), { name: answer.error.name });
      return answer.value as T;
    },
    async logs(appId: string, object?: string): Promise<LoggedEntry[]> {
      const service = await mf.getWorker("logs");
      const entries = (await (await service.fetch("http://logs/entries")).json()) as LoggedEntry[];
      return entries.filter((e) => e.appId === appId && (object === undefined || e.context.object === object));
    },
    dispose: () => mf.dispose(),
  };
}
