import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import type { LogEvent } from "../../../src/core/logger.js";

/**
 * A real HTTP server on 127.0.0.1 whose answer per path is scripted: each request to a path takes
 * the next step of that path's script, and the last step repeats. Steps answer, hang until the
 * client goes away, drop the connection before answering, or cut it in the middle of the body.
 */

export type Answer = {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
  /** Sent as is. */
  body?: string;
};

export type Step =
  | Answer
  /** Never answers: the request stays open until the client aborts it (a per-attempt timeout). */
  | { hang: true }
  /** Destroys the socket before any byte of an answer. */
  | { drop: true }
  /** Sends the status line, headers and the start of the body, then destroys the socket. */
  | { cut: true; status?: number; partial?: string };

export interface Received {
  method: string;
  path: string;
  /** Path and query as the server saw them. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Replaces `path`'s script. A step may be a function of the request (to compute headers from the time). */
  script(path: string, ...steps: (Step | ((request: Received) => Step))[]): void;
  /** Requests received, for one path or all. */
  received(path?: string): Received[];
  /** Resolves once `path` has received `count` requests. */
  waitForRequests(path: string, count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const scripts = new Map<string, (Step | ((request: Received) => Step))[]>();
  const served = new Map<string, number>();
  const log: Received[] = [];
  const waiters: { path: string; count: number; resolve: () => void }[] = [];

  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = req.url ?? "/";
      const path = new URL(url, "http://127.0.0.1").pathname;
      const request: Received = { method: req.method ?? "GET", path, url, headers: req.headers, body };
      log.push(request);
      for (const w of [...waiters]) {
        if (w.path === path && log.filter((r) => r.path === path).length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      const script = scripts.get(path);
      if (!script || script.length === 0) {
        res.writeHead(500, { "content-type": "text/plain" }).end(`no script for ${path}`);
        return;
      }
      const index = served.get(path) ?? 0;
      served.set(path, index + 1);
      const entry = script[Math.min(index, script.length - 1)]!;
      const step = typeof entry === "function" ? entry(request) : entry;
      if ("hang" in step) return;
      if ("drop" in step) {
        req.socket.destroy();
        return;
      }
      if ("cut" in step) {
        res.writeHead(step.status ?? 200, { "content-type": "application/json", "content-length": "1000" });
        res.write(step.partial ?? '{"partial":', () => req.socket.destroy());
        return;
      }
      const headers: Record<string, string> = { ...step.headers };
      let payload = step.body ?? "";
      if (step.json !== undefined) {
        payload = JSON.stringify(step.json);
        headers["content-type"] ??= "application/json";
      }
      res.writeHead(step.status ?? 200, headers).end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    script(path, ...steps) {
      scripts.set(path, steps);
      served.set(path, 0);
    },
    received: (path) => (path === undefined ? [...log] : log.filter((r) => r.path === path)),
    waitForRequests(path, count) {
      if (log.filter((r) => r.path === path).length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ path, count, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** One scripted server for a test file: started before its tests, closed after them. */
export function scriptedServer(): { readonly current: ScriptedServer } {
  const holder: { current: ScriptedServer } = { current: undefined as unknown as ScriptedServer };
  beforeAll(async () => {
    holder.current = await startScriptedServer();
  });
  afterAll(async () => {
    await holder.current?.close();
  });
  return holder;
}

/** A port on 127.0.0.1 that nothing listens on (it was open a moment ago): connections are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Log events captured in memory, for a client's `logger` option. */
export function captureEvents(): { events: LogEvent[]; logger: (event: LogEvent) => void; named: (name: string) => LogEvent[] } {
  const events: LogEvent[] = [];
  return { events, logger: (event) => events.push(event), named: (name) => events.filter((e) => e.event === name) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
