/** A small client of the API over real fetch, for the demo and the tests. */

export type Json = Record<string, unknown>;

export interface Reply<T = Json> {
  status: number;
  /** The server answered from its cache of an earlier request with the same key. */
  replayed: boolean;
  body: T;
  headers: Headers;
}

export interface ApiClient {
  readonly url: string;
  /** POST with `Idempotency-Key: key` (none when key is null). */
  post<T = Json>(path: string, key: string | null, body?: unknown): Promise<Reply<T>>;
  get<T = Json>(path: string): Promise<Reply<T>>;
}

export function apiClient(url: string): ApiClient {
  const send = async <T>(method: string, path: string, key: string | null, body?: unknown): Promise<Reply<T>> => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (key !== null) headers["idempotency-key"] = key;
    const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, replayed: res.headers.get("idempotent-replayed") === "true", body: (await res.json()) as T, headers: res.headers };
  };
  return {
    url,
    post: (path, key, body) => send("POST", path, key, body ?? {}),
    get: (path) => send("GET", path, null),
  };
}
