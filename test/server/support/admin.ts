import { afterEach } from "vitest";
import { serve, type ServeOptions, type Serving } from "../../../src/server/index.js";
import { engineFor, type Engine, type EngineOptions } from "../../support/queue-fixtures.js";
import type { StoreCase } from "../../support/stores.js";

export const TOKEN = "test-admin-token-0123456789";

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Admin extends Engine {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** A request with the admin token (unless `token` says otherwise); the body is parsed when JSON. */
  request<T = Record<string, unknown>>(method: string, path: string, options?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Answer<T>>;
  get<T = Record<string, unknown>>(path: string): Promise<Answer<T>>;
  post<T = Record<string, unknown>>(path: string, body?: unknown): Promise<Answer<T>>;
  /** Closes the server now (the engine keeps running until the test ends). */
  close(): Promise<void>;
}

/**
 * An engine of `storeCase` on a fake clock (test/support/queue-fixtures) with the admin server in
 * front of it on a real port of 127.0.0.1; both are stopped after each test, the server first.
 */
export function adminFor(storeCase: StoreCase): (options?: { engine?: EngineOptions; server?: Omit<ServeOptions, "port" | "host"> }) => Promise<Admin> {
  const engine = engineFor(storeCase);
  let serving: Serving | undefined;
  afterEach(async () => {
    await serving?.close();
    serving = undefined;
  });
  return async (options = {}) => {
    const e = await engine(options.engine);
    serving = await serve(e.tw, { port: 0, token: TOKEN, ...options.server });
    const url = serving.url;
    const request: Admin["request"] = async (method, path, o = {}) => requestJson(url, method, path, o);
    const close = async () => {
      await serving?.close();
      serving = undefined;
    };
    return { ...e, url, request, get: (path) => request("GET", path), post: (path, body) => request("POST", path, { body }), close };
  };
}

export async function requestJson<T>(
  url: string,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? TOKEN : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(new URL(path, url), { method, headers, body });
  const text = await response.text();
  const json = (response.headers.get("content-type") ?? "").includes("json") ? (JSON.parse(text) as T) : (undefined as T);
  return { status: response.status, headers: response.headers, body: json, text };
}
