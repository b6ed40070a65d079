import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as z from "zod";
import { InvalidInputError } from "../../src/index.js";
import { EmptyStateError, fanoutReceiver, type FanoutReceiver, type ReceiverStorage, type StateSource } from "../../src/fanout/index.js";
import type { FailureDecider, FailureMode } from "./failures.js";
import { AlertPayload, CollectorPayload, STATIC_SYMBOL_INFO, type SymbolMetadata } from "./symbols.js";

/**
 * One downstream service of seed 001 (a PriceCollector or a PriceAlert Durable Object), as a real
 * `node:http` server on 127.0.0.1:
 *
 * - `POST /symbols` takes a pushed symbol list: validated with zod, an empty list refused (422),
 *   kept in a JSON file (the Durable Object's KV storage) and in memory;
 * - `GET /state` answers what the service runs on and where it came from: `pushed`, `stored` (read
 *   back from the file after a restart) or `default` (collectors: the static symbol table; alerts:
 *   `null`, allow every symbol).
 *
 * It fails on purpose when told to (a scripted list per receiver, then a `FailureDecider`), and it
 * restarts: the server closes and reopens on the same port with a fresh receiver, so memory is lost
 * and the file is not.
 */

export type ReceiverKind = "collector" | "alert";
export type Symbols = SymbolMetadata[] | string[];

/** The pushed state's version travels in a header: the body is exactly the group's projection. */
export const VERSION_HEADER = "x-symbols-version";

export interface ReceiverView {
  id: string;
  kind: ReceiverKind;
  location: string;
  source: StateSource;
  /** The symbols it runs on; null for an alert receiver on its default: every symbol is allowed. */
  symbols: Symbols | null;
  /** The version of the last push this boot accepted; null since a (re)start. */
  version: number | null;
}

export interface ReceiverStats {
  /** Pushes received (`POST /symbols`), failed on purpose or not. */
  pushes: number;
  accepted: number;
  /** Answered 400 or 422: a body that failed validation, or an empty list. */
  refused: number;
  /** Answered 500 on purpose. */
  errors: number;
  /** Held without an answer on purpose. */
  hung: number;
  restarts: number;
}

export interface ReceiverServiceOptions {
  id: string;
  kind: ReceiverKind;
  location: string;
  /** Where the JSON file that stands in for the Durable Object's KV is kept. */
  storageDir: string;
  /** Read at each push, so a fleet can change it while running. */
  failure?: () => FailureDecider | null;
  /** How long a hung push is held (real ms) before the connection is dropped; Infinity: until the client gives up. Default 200. */
  hangMs?: number;
}

export interface ReceiverService {
  readonly id: string;
  readonly kind: ReceiverKind;
  readonly location: string;
  /** `http://127.0.0.1:<port>`, the same across restarts. */
  readonly url: string;
  readonly up: boolean;
  readonly stats: Readonly<ReceiverStats>;
  /** The next pushes fail this way, in order, before the `failure` decider is asked again. */
  failNext(...modes: FailureMode[]): void;
  /** Closes the server (requests in flight are cut): pushes are refused until `start()`. Memory is lost. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** stop() then start(); `wipeStorage` also deletes the stored state (an eviction that lost its KV too). */
  restart(options?: { wipeStorage?: boolean }): Promise<void>;
  close(): Promise<void>;
}

const KINDS = {
  collector: { schema: CollectorPayload as z.ZodType<Symbols>, fallback: [...STATIC_SYMBOL_INFO] as Symbols | null },
  alert: { schema: AlertPayload as z.ZodType<Symbols>, fallback: null as Symbols | null },
} satisfies Record<ReceiverKind, unknown>;

const MAX_BODY = 1_000_000;

export async function startReceiver(options: ReceiverServiceOptions): Promise<ReceiverService> {
  const { id, kind, location } = options;
  const { schema, fallback } = KINDS[kind];
  const hangMs = options.hangMs ?? 200;
  const path = join(options.storageDir, `${id}.json`);
  const storage = jsonFileStorage(path, schema);
  const stats: ReceiverStats = { pushes: 0, accepted: 0, refused: 0, errors: 0, hung: 0, restarts: 0 };
  const scripted: FailureMode[] = [];
  let port = 0;
  let server: Server | undefined;
  // What a (re)start builds afresh: the memory of a Durable Object instance.
  let boot: { receiver: FanoutReceiver<Symbols>; version: number | null } | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const current = boot!;
    if (req.method === "GET" && req.url === "/state") {
      const { state, source } = await current.receiver.current();
      return json(res, 200, { id, kind, location, source, symbols: state, version: current.version } satisfies ReceiverView);
    }
    if (req.method !== "POST" || req.url !== "/symbols") return json(res, 404, { error: "not_found", message: `no route for ${req.method} ${req.url}` });
    stats.pushes++;
    const mode = scripted.shift() ?? options.failure?.()?.(id, stats.pushes) ?? null;
    if (mode === "hang") {
      stats.hung++;
      if (Number.isFinite(hangMs)) {
        const timer = setTimeout(() => req.socket.destroy(), hangMs);
        req.socket.once("close", () => clearTimeout(timer));
      }
      return;
    }
    const text = await readBody(req);
    if (mode === "error") {
      stats.errors++;
      return json(res, 500, { error: "injected_failure", message: `${id} fails this push on purpose` });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      stats.refused++;
      return json(res, 400, { error: "invalid_json", message: "the body must be a JSON array of symbols" });
    }
    try {
      const state = await current.receiver.receive(body);
      stats.accepted++;
      const version = Number(req.headers[VERSION_HEADER]);
      current.version = Number.isInteger(version) ? version : null;
      return json(res, 200, { ok: true, symbols: state.length });
    } catch (error) {
      // The seed's receivers log the refusal and keep running on what they had.
      if (error instanceof EmptyStateError) return refuse(res, 422, "empty_state", error.message);
      if (error instanceof InvalidInputError) return refuse(res, 400, "invalid_state", error.message);
      throw error;
    }
  }

  function refuse(res: ServerResponse, status: number, code: string, message: string): void {
    stats.refused++;
    json(res, status, { error: code, message });
  }

  async function start(): Promise<void> {
    if (server) return;
    boot = { receiver: fanoutReceiver<Symbols>({ validate: (body) => schema.parse(body), storage, fallback }), version: null };
    const s = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) json(res, 500, { error: "internal_error", message: error instanceof Error ? error.message : String(error) });
      });
    });
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        s.off("error", reject);
        resolve();
      });
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  }

  async function stop(): Promise<void> {
    const s = server;
    if (!s) return;
    server = undefined;
    boot = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve, reject) => s.close((error) => (error ? reject(error) : resolve())));
  }

  await start();
  return {
    id,
    kind,
    location,
    url: `http://127.0.0.1:${port}`,
    get up() {
      return server !== undefined;
    },
    stats,
    failNext: (...modes) => void scripted.push(...modes),
    stop,
    start,
    async restart(o = {}) {
      await stop();
      if (o.wipeStorage) await rm(path, { force: true });
      stats.restarts++;
      await start();
    },
    close: stop,
  };
}

/** The Durable Object's KV as a JSON file per receiver, replaced whole by a rename so a crash never leaves half a state. */
export function jsonFileStorage<S>(path: string, schema: z.ZodType<S>): ReceiverStorage<S> {
  let writes = 0;
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      }
      return schema.parse(JSON.parse(text));
    },
    async save(state) {
      const temp = `${path}.${process.pid}.${++writes}.tmp`;
      await writeFile(temp, JSON.stringify(state));
      await rename(temp, path);
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy(new Error(`body larger than ${MAX_BODY} bytes`));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Every answer closes its connection. Rounds are minutes apart in production, longer than any
 * keep-alive, so each push opens a connection anyway; reusing one between rounds that a fake clock
 * runs milliseconds apart would also send a push after a restart down the dead connection.
 */
function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), connection: "close" });
  res.end(text);
}
