import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for Tenero's price API, over real HTTP on 127.0.0.1, behaving as the seed's live
 * probe found it: `x-ratelimit-type: web-ui-ip`, 100 requests a minute and 50,000 a month per client
 * (per source IP without an API key: from a Cloudflare Worker that is the datacenter's shared egress
 * IP, so the budget is collective), `cf-ray` on every answer, and a 429 with `Retry-After` once the
 * minute's budget is spent.
 *
 * `GET /v1/tokens/:id/price` answers `{ token, price }` (USD). Budgets live in fixed windows on the
 * injected `now()`, so a test drives them with its fake clock. Switches: failures (5xx), a delay
 * before answering, unknown tokens (404), `spend()` for traffic from neighbours on the same IP, and
 * `refuseNext()` for a 429 whatever our own traffic left of the budget.
 */

export interface FakeTeneroOptions {
  /** The server's clock (epoch ms); default `Date.now`. Give a fake clock's `now` in tests. */
  now?: () => number;
  /** Requests per window and client; default 100 (Tenero's per-minute budget). */
  minuteLimit?: number;
  /** The "minute" window's length in ms; default 60,000. The demo shortens it so a reset shows in a short run. */
  windowMs?: number;
  /** Requests per calendar month (UTC) and client; default 50,000. */
  monthLimit?: number;
  /** Fixed prices by token; other tokens get a price derived from their id and the time. */
  prices?: Record<string, number>;
}

export type FailureSwitch = { status: number; tokens?: readonly string[] } | null;

export interface TeneroRequest {
  token: string;
  client: string;
  /** The request's `user-agent`: which caller sent it, when callers name themselves. */
  caller: string | null;
  status: number;
  /** When it was answered (the server's `now()`; arrival, unless a delay held it). */
  at: number;
  /** A 429 from `refuseNext`, not from the budget. */
  injected?: true;
  /**
   * When the caller sent it, where it says so in an `x-sent-at` header (epoch ms): a test tells a
   * request already on its way when something happened from one sent after it.
   */
  sentAt?: number;
}

export interface FakeTenero {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request, in order, with the status it got. */
  readonly requests: readonly TeneroRequest[];
  /** The price the server answers for `token` at time `at` (default: its now). */
  priceOf(token: string, at?: number): number;
  setPrice(token: string, price: number): void;
  /** Answers `status` (e.g. 503) for the listed tokens, or every token; `null` turns it off. */
  setFailure(failure: FailureSwitch): void;
  /** Waits this many real milliseconds before answering (a slow upstream), for the listed tokens or all; 0 turns it off. */
  setDelay(ms: number, tokens?: readonly string[]): void;
  /** Requests received and not answered yet (held by a delay). */
  readonly inFlight: number;
  /** The token is unknown to Tenero: 404. */
  unlist(token: string): void;
  /**
   * The next `count` requests (default 1) get a 429 with `Retry-After: retryAfterSeconds` and the
   * minute's remaining at 0, as when neighbours on the same IP spent the budget first; they do not
   * count against the budget.
   */
  refuseNext(retryAfterSeconds: number, count?: number): void;
  /** Uses up `count` of a client's budget, as other tenants behind the same egress IP would. */
  spend(count: number, client?: string): void;
  /** What is left of a client's budgets now. */
  remaining(client?: string): { minute: number; month: number };
  close(): Promise<void>;
}

const DEFAULT_CLIENT = "127.0.0.1";
const PRICE_PATH = /^\/v1\/tokens\/([^/]+)\/price$/;

export async function startFakeTenero(options: FakeTeneroOptions = {}): Promise<FakeTenero> {
  const now = options.now ?? Date.now;
  const minuteLimit = options.minuteLimit ?? 100;
  const windowMs = options.windowMs ?? 60_000;
  const monthLimit = options.monthLimit ?? 50_000;
  const prices = new Map(Object.entries(options.prices ?? {}));
  const unlisted = new Set<string>();
  /** Requests counted per client and window: `${client}|w${window}` and `${client}|m${month}`. */
  const used = new Map<string, number>();
  const requests: TeneroRequest[] = [];
  let failure: FailureSwitch = null;
  let delay: { ms: number; tokens?: readonly string[] } = { ms: 0 };
  let refusals: { left: number; retryAfterSeconds: number } = { left: 0, retryAfterSeconds: 0 };
  const held = new Set<NodeJS.Timeout>();

  const windowOf = (at: number) => Math.floor(at / windowMs);
  const monthOf = (at: number) => {
    const d = new Date(at);
    return d.getUTCFullYear() * 12 + d.getUTCMonth();
  };
  const monthEnd = (at: number) => {
    const d = new Date(at);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  };
  const count = (key: string) => used.get(key) ?? 0;
  const budget = (client: string, at: number) => {
    const minuteKey = `${client}|w${windowOf(at)}`;
    const monthKey = `${client}|m${monthOf(at)}`;
    return {
      minuteKey,
      monthKey,
      minute: Math.max(0, minuteLimit - count(minuteKey)),
      month: Math.max(0, monthLimit - count(monthKey)),
      minuteResetAt: (windowOf(at) + 1) * windowMs,
      monthResetAt: monthEnd(at),
    };
  };
  const priceOf = (token: string, at = now()) => {
    const fixed = prices.get(token);
    if (fixed !== undefined) return fixed;
    // A stable base per token, drifting a little each minute: a refreshed price visibly changes.
    let hash = 2166136261;
    for (const ch of token) hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619);
    const base = 0.01 + ((hash >>> 0) % 100_000) / 100;
    const drift = 1 + 0.02 * Math.sin(Math.floor(at / 60_000));
    return Math.round(base * drift * 1e6) / 1e6;
  };

  function rateLimitHeaders(res: ServerResponse, r: { apiKey: string | undefined; minute: number; month: number; minuteResetAt: number; monthResetAt: number; at: number }): void {
    res.setHeader("x-ratelimit-type", r.apiKey ? "api-key" : "web-ui-ip");
    res.setHeader("x-ratelimit-minute-limit", String(minuteLimit));
    res.setHeader("x-ratelimit-minute-remaining", String(r.minute));
    res.setHeader("x-ratelimit-minute-reset", String(secondsUntil(r.minuteResetAt, r.at)));
    res.setHeader("x-ratelimit-month-limit", String(monthLimit));
    res.setHeader("x-ratelimit-month-remaining", String(r.month));
    res.setHeader("x-ratelimit-month-reset", String(secondsUntil(r.monthResetAt, r.at)));
  }

  function answer(req: IncomingMessage, res: ServerResponse): void {
    const at = now();
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    // Cloudflare's own headers, on every answer; `date` from the injected clock, so absolute times
    // agree with the budget windows.
    res.setHeader("server", "cloudflare");
    res.setHeader("cf-ray", `${randomBytes(8).toString("hex")}-IAD`);
    res.setHeader("date", new Date(at).toUTCString());
    const match = req.method === "GET" ? PRICE_PATH.exec(path) : null;
    if (!match) return json(res, 404, { error: "not_found", message: `no route for ${req.method} ${path}` });
    const token = decodeURIComponent(match[1]!);
    const apiKey = header(req, "x-api-key");
    const client = apiKey ? `key:${apiKey}` : (req.socket.remoteAddress ?? DEFAULT_CLIENT);
    const b = budget(client, at);
    const caller = header(req, "user-agent") ?? null;
    const sent = Number(header(req, "x-sent-at"));
    const record = (status: number, injected?: true) =>
      requests.push({ token, client, caller, status, at, ...(injected ? { injected } : {}), ...(Number.isFinite(sent) && sent > 0 ? { sentAt: sent } : {}) });

    if (refusals.left > 0) {
      refusals = { ...refusals, left: refusals.left - 1 };
      rateLimitHeaders(res, { apiKey, minute: 0, month: b.month, minuteResetAt: b.minuteResetAt, monthResetAt: b.monthResetAt, at });
      res.setHeader("retry-after", String(refusals.retryAfterSeconds));
      record(429, true);
      return json(res, 429, { error: "rate_limited", message: "rate limit exceeded for this minute" });
    }
    const spent = b.minute === 0 || b.month === 0;
    if (!spent) {
      used.set(b.minuteKey, count(b.minuteKey) + 1);
      used.set(b.monthKey, count(b.monthKey) + 1);
    }
    const left = spent ? b : { ...b, minute: b.minute - 1, month: b.month - 1 };
    rateLimitHeaders(res, { apiKey, minute: left.minute, month: left.month, minuteResetAt: b.minuteResetAt, monthResetAt: b.monthResetAt, at });

    if (spent) {
      const resetAt = b.month === 0 ? b.monthResetAt : b.minuteResetAt;
      res.setHeader("retry-after", String(secondsUntil(resetAt, at)));
      record(429);
      return json(res, 429, { error: "rate_limited", message: `rate limit exceeded for ${b.month === 0 ? "this month" : "this minute"}` });
    }
    if (failure && (!failure.tokens || failure.tokens.includes(token))) {
      record(failure.status);
      return json(res, failure.status, { error: "upstream_error", message: `price source unavailable (${failure.status})` });
    }
    if (unlisted.has(token)) {
      record(404);
      return json(res, 404, { error: "token_not_found", message: `unknown token ${token}` });
    }
    record(200);
    json(res, 200, { token, price: priceOf(token, at) });
  }

  const server = createServer((req, res) => {
    // The request is counted when it is answered, so a slow answer lands in the window it is answered in.
    const token = PRICE_PATH.exec(new URL(req.url ?? "/", "http://127.0.0.1").pathname)?.[1];
    const slow = delay.ms > 0 && (!delay.tokens || (token !== undefined && delay.tokens.includes(decodeURIComponent(token))));
    if (!slow) return answer(req, res);
    const timer = setTimeout(() => {
      held.delete(timer);
      if (!res.destroyed) answer(req, res);
    }, delay.ms);
    held.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    priceOf,
    setPrice: (token, price) => void prices.set(token, price),
    setFailure: (f) => void (failure = f),
    setDelay: (ms, tokens) => void (delay = tokens ? { ms: Math.max(0, ms), tokens } : { ms: Math.max(0, ms) }),
    get inFlight() {
      return held.size;
    },
    unlist: (token) => void unlisted.add(token),
    refuseNext: (retryAfterSeconds, count = 1) => void (refusals = { left: count, retryAfterSeconds }),
    spend(n, client = DEFAULT_CLIENT) {
      const b = budget(client, now());
      used.set(b.minuteKey, count(b.minuteKey) + n);
      used.set(b.monthKey, count(b.monthKey) + n);
    },
    remaining(client = DEFAULT_CLIENT) {
      const b = budget(client, now());
      return { minute: b.minute, month: b.month };
    },
    close() {
      for (const timer of held) clearTimeout(timer);
      held.clear();
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** Whole seconds until `at`, rounded up: a client that waits this long finds the budget back. */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1_000));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
