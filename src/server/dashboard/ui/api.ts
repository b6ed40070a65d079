const TOKEN_KEY = "tickwork.adminToken";

/** A non-2xx answer of the admin API: its status and its message. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The admin token lives in this tab's sessionStorage (never a cookie, so no cross-site request can
 * carry it). A link may bring it in the fragment (`#token=...`), which browsers never send to the
 * server; it is moved to storage and removed from the address bar at once.
 */
export function takeTokenFromUrl(): void {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (token === null) return;
  saveToken(token);
  history.replaceState(null, "", location.pathname + location.search);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Whether a token is kept: a 401 then means it was refused, not that none was given. */
export function hasToken(): boolean {
  return sessionStorage.getItem(TOKEN_KEY) !== null;
}

/** The admin API, at `base` relative to the page (the app may be mounted under any path). */
export class AdminApi {
  constructor(private readonly base: string) {}

  async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const data = (await response.json().catch(() => null)) as { message?: string } | null;
    if (!response.ok) throw new ApiFailure(response.status, data?.message ?? `${response.status} ${response.statusText}`);
    return data as T;
  }
}
