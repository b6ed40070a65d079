import * as z from "zod";
import { exponential, nextDelay, type Backoff } from "../core/backoff.js";
import { systemClock, type Clock, type TimerHandle } from "../core/clock.js";
import type { Duration } from "../core/duration.js";
import { CallTimeoutError, InvalidInputError, describe } from "../core/errors.js";
import { Logger, jsonLines, toSink, type LogLevel, type LoggerOption } from "../core/logger.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import type { RateGate } from "../core/rate-gate.js";
import { HttpError, HttpNetworkError, HttpSchemaError, HttpTimeoutError, RateLimitedError, type HttpFailure, type SchemaIssue } from "./errors.js";
import { parseRetryAfter, requestIdOf } from "./headers.js";
import { parseRateLimit, type RateLimit } from "./rate-limit.js";

/**
 * A typed fetch wrapper on the platform's `fetch`, `AbortController` and `Headers` only, so it runs
 * unchanged in Node and in workerd (a task that refreshes prices from a rate-limited API is the case
 * it was built for). It retries what can succeed on a second try, reads every rate-limit header
 * family into one object, and turns a rate-limit signal into an error whose `retryAfter` tickwork's
 * queue and scheduler both honour.
 */

/** Anything with zod's `safeParse` (zod 3 and 4 alike): the response body is checked against it. */
export interface Schema<T> {
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: { issues: readonly SchemaIssue[] } };
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Sent on every request: as a header (`x-api-key`), or as a query parameter that logs never show. */
export type ApiKey = { header: string; value: string } | { query: string; value: string };

export interface RetryOptions {
  /** Attempts in all, the first included; default 3. */
  maxAttempts?: number;
  /** Delay before each retry when the server names none; default exponential from 200ms, x2, up to 10s, full jitter. */
  backoff?: Backoff;
  /**
   * Retry non-idempotent methods (POST, PATCH) too. Off by default: a POST whose answer was lost may
   * have been done. A request with an `Idempotency-Key` header is retried without it.
   */
  unsafe?: boolean;
}

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

export interface RequestOptions<T = unknown> {
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  /** Sent as JSON (`content-type: application/json` unless you set another). */
  body?: unknown;
  /** The body must match it, or the request fails with `HttpSchemaError`; `data` is its output. */
  schema?: Schema<T>;
  /** Aborting it cancels the request and any wait between attempts at once; its reason is thrown. */
  signal?: AbortSignal;
  /** This request's per-attempt timeout. */
  timeout?: Duration;
  /** This request's retry options over the client's; `false`: one attempt. */
  retry?: RetryOptions | false;
}

export interface HttpResponse<T = unknown> {
  status: number;
  /** The body: the schema's output when a schema was given, else JSON when the server says JSON, else text. */
  data: T;
  headers: Headers;
  /** The response's rate-limit headers, read into one object; null when it has none. */
  rateLimit: RateLimit | null;
  /** Attempts made, this one included. */
  attempts: number;
  /** The upstream's request id (`cf-ray`, `x-request-id`...), or null. */
  requestId: string | null;
  /** The request URL without credentials or a query-parameter API key: safe to log. */
  url: string;
}

export interface HttpClientOptions {
  /** Paths are resolved under it: `baseUrl: "https://api.example.com/v1"` + `"/tokens"`. */
  baseUrl?: string;
  /** Sent with every request (a request's own headers win). */
  headers?: Record<string, string>;
  apiKey?: ApiKey;
  /** Per-attempt timeout; default 10s. */
  timeout?: Duration;
  retry?: RetryOptions;
  /** Statuses worth another attempt; default 429, 500, 502, 503, 504. Other 4xx never are. */
  retryOn?: readonly number[] | ((status: number) => boolean);
  /**
   * The longest wait between attempts that a server may ask for (`Retry-After`, a rate-limit reset);
   * default 60s. A longer one ends the request at once with an error carrying `retryAfter`, so a
   * scheduler backs off instead of holding a run open.
   */
  maxRetryAfter?: Duration;
  /** The engine's `Logger` (`tw.logger`, a task's `ctx.logger`), or a sink; default JSON lines on the console. */
  logger?: Logger | LoggerOption;
  /** Level for a logger built from a sink; default "info". */
  logLevel?: LogLevel;
  /** Timeouts and waits between attempts run on it; give the engine's clock so tests can fake time. */
  clock?: Clock;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Names this upstream in log events (`client: "tenero"`). */
  name?: string;
  /**
   * A budget every attempt draws from first (`tw.limiter(...)`, shared by every process). When the
   * upstream says the budget is spent (a 429, or `x-ratelimit-remaining: 0` with a reset), the limiter
   * is paused until then, for every caller of the budget, not only this request.
   */
  limiter?: RateGate;
}

/** Retried by default: repeating them has the same effect as doing them once (RFC 9110, 9.2.2). */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]);
const DEFAULT_RETRY_ON = [429, 500, 502, 503, 504];
/** A 429 that names no wait and no reset: come back in a minute, the commonest limiter window. */
const RATE_LIMIT_FALLBACK_MS = 60_000;
/** How much of a failing response's body an error keeps. */
const BODY_EXCERPT = 1_000;

const retrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(100).optional(),
    backoff: fn<Backoff>("a backoff: exponential(...), schedule([...]) or (failures) => ms").optional(),
    unsafe: z.boolean().optional(),
  })
  .strict();

const headersSchema = z.record(z.string(), z.string());

const clientSchema = z
  .object({
    baseUrl: z.url().optional(),
    headers: headersSchema.optional(),
    apiKey: z
      .union([
        z.object({ header: z.string().min(1), value: z.string().min(1) }).strict(),
        z.object({ query: z.string().min(1), value: z.string().min(1) }).strict(),
      ])
      .optional(),
    timeout: durationMs.default(10_000),
    retry: retrySchema.optional(),
    retryOn: z.union([z.array(z.number().int()), fn<(status: number) => boolean>("a function (status) => boolean")]).optional(),
    maxRetryAfter: durationMs.default(60_000),
    logger: z.custom<Logger | LoggerOption>((v) => v !== undefined && v !== null, "expected a logger").optional(),
    logLevel: z.enum(["debug", "info", "warn", "error", "critical"]).default("info"),
    clock: z.custom<Clock>((v) => !!v && typeof (v as Clock).now === "function" && typeof (v as Clock).setTimeout === "function", "expected a Clock").optional(),
    fetch: fn<FetchLike>("a fetch function").optional(),
    name: z.string().min(1).max(100).optional(),
    limiter: z
      .custom<RateGate>((v) => !!v && typeof (v as RateGate).acquire === "function" && typeof (v as RateGate).pauseUntil === "function", "expected a limiter from tw.limiter(name, { max, per })")
      .optional(),
  })
  .strict();

const requestSchema = z
  .object({
    query: z.record(z.string(), z.unknown()).optional(),
    headers: headersSchema.optional(),
    body: z.unknown().optional(),
    schema: z.custom<Schema<unknown>>((v) => !!v && typeof (v as Schema<unknown>).safeParse === "function", "expected a schema with safeParse (zod)").optional(),
    signal: z.custom<AbortSignal>((v) => !!v && typeof (v as AbortSignal).aborted === "boolean" && typeof (v as AbortSignal).addEventListener === "function", "expected an AbortSignal").optional(),
    timeout: durationMs.optional(),
    retry: z.union([retrySchema, z.literal(false)]).optional(),
  })
  .strict();

/**
 * ```ts
 * const tenero = createHttpClient({ baseUrl: "https://api.tenero.io", name: "tenero", logger: tw.logger, clock,
 *   apiKey: env.TENERO_API_KEY ? { header: "x-api-key", value: env.TENERO_API_KEY } : undefined });
 * tw.task("prices", { every: "5m", run: async (ctx) => {
 *   const res = await tenero.get(`/v1/tokens/${id}`, { schema: Price, signal: ctx.signal });
 *   if (res.rateLimit?.exhausted && res.rateLimit.resetAt) ctx.backoffUntil(res.rateLimit.resetAt);
 *   return res.data;  // a 429 throws RateLimitedError: the task backs off until its retryAfter
 * } });
 * ```
 */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  return new HttpClient(options);
}

type Attempt =
  | { kind: "response"; response: Response; text: string }
  | { kind: "timeout" }
  | { kind: "network"; error: unknown };

interface Call {
  method: string;
  url: string;
  attempt: number;
  maxAttempts: number;
}

export class HttpClient {
  /** Where this client's events go, named as the engine names its sink. */
  readonly logSink: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly baseUrl: string | undefined;
  private readonly headers: Record<string, string>;
  private readonly apiKey: ApiKey | undefined;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff;
  private readonly unsafe: boolean;
  private readonly retryOn: (status: number) => boolean;
  private readonly maxRetryAfterMs: number;
  private readonly fetch: FetchLike;
  private readonly name: string | undefined;
  private readonly limiter: RateGate | undefined;

  constructor(options: HttpClientOptions = {}) {
    const o = parseOptions(clientSchema, options, "createHttpClient");
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger instanceof Logger ? o.logger : new Logger(o.logger === undefined ? jsonLines() : toSink(o.logger), () => this.clock.now(), o.logLevel);
    this.logSink = this.logger.sink.name;
    this.baseUrl = o.baseUrl;
    this.headers = o.headers ?? {};
    this.apiKey = o.apiKey;
    this.timeoutMs = o.timeout;
    this.maxAttempts = o.retry?.maxAttempts ?? 3;
    this.backoff = o.retry?.backoff ?? exponential({ base: "200ms", factor: 2, max: "10s", jitter: "full" });
    this.unsafe = o.retry?.unsafe ?? false;
    const retryOn = o.retryOn ?? DEFAULT_RETRY_ON;
    this.retryOn = typeof retryOn === "function" ? retryOn : (status) => retryOn.includes(status);
    this.maxRetryAfterMs = o.maxRetryAfter;
    // Looked up per call, and called unbound: workerd refuses a `fetch` detached from its global.
    this.fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.name = o.name;
    this.limiter = o.limiter;
  }

  get<T = unknown>(path: string, options?: Omit<RequestOptions<T>, "body">): Promise<HttpResponse<T>> {
    return this.request("GET", path, options);
  }
  post<T = unknown>(path: string, options?: RequestOptions<T>): Promise<HttpResponse<T>> {
    return this.request("POST", path, options);
  }
  put<T = unknown>(path: string, options?: RequestOptions<T>): Promise<HttpResponse<T>> {
    return this.request("PUT", path, options);
  }
  patch<T = unknown>(path: string, options?: RequestOptions<T>): Promise<HttpResponse<T>> {
    return this.request("PATCH", path, options);
  }
  delete<T = unknown>(path: string, options?: RequestOptions<T>): Promise<HttpResponse<T>> {
    return this.request("DELETE", path, options);
  }

  /**
   * Sends the request, retrying network errors, timeouts and the `retryOn` statuses (idempotent
   * methods only, unless `retry.unsafe` or an `Idempotency-Key` header), waiting what the server asks
   * (`Retry-After`, a rate-limit reset) or else the backoff. Resolves with any status below 400;
   * throws `HttpError`, `RateLimitedError`, `HttpTimeoutError`, `HttpNetworkError` or
   * `HttpSchemaError`, or the signal's reason when the caller aborts.
   */
  async request<T = unknown>(method: string, path: string, options: RequestOptions<T> = {}): Promise<HttpResponse<T>> {
    const o = parseOptions(requestSchema, options, `${method} ${path}`);
    const verb = method.toUpperCase();
    const url = this.url(path, (o.query ?? {}) as Record<string, QueryValue>);
    const safeUrl = this.redactUrl(url);
    const headers = this.requestHeaders(o.headers, o.body !== undefined);
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const retry = o.retry === false ? { maxAttempts: 1 } : (o.retry ?? {});
    const maxAttempts = retry.maxAttempts ?? this.maxAttempts;
    const backoff = retry.backoff ?? this.backoff;
    const mayRetry = IDEMPOTENT.has(verb) || (retry.unsafe ?? this.unsafe) || headers.has("idempotency-key");
    const timeoutMs = o.timeout ?? this.timeoutMs;
    const signal = o.signal;
    const init: RequestInit = { method: verb, headers, body, redirect: "follow" };

    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const call: Call = { method: verb, url: safeUrl, attempt, maxAttempts };
      if (this.limiter) await this.takeToken(call, signal);
      const result = await this.attempt(url.toString(), init, timeoutMs, signal);
      signal?.throwIfAborted();
      const canRetry = mayRetry && attempt < maxAttempts;

      if (result.kind !== "response") {
        const error =
          result.kind === "timeout"
            ? new HttpTimeoutError(this.failure(call, null), timeoutMs)
            : new HttpNetworkError(this.failure(call, null), this.mask(networkReason(result.error)), result.error);
        const delay = canRetry ? nextDelay(backoff, attempt) : null;
        if (delay === null) throw this.failed(call, error);
        this.logger.warn("http.retry", { ...this.fields(call), requestId: null, error: error.message, code: error.code, delayMs: delay });
        await wait(this.clock, delay, signal);
        continue;
      }

      const { response, text } = result;
      const now = this.clock.now();
      const rateLimit = parseRateLimit(response.headers, now);
      const requestId = requestIdOf(response.headers);
      const status = response.status;
      if (rateLimit?.exhausted) {
        this.logger.warn("http.rate_limited", {
          ...this.fields(call), status, requestId,
          limit: rateLimit.limit, remaining: rateLimit.remaining, resetAt: rateLimit.resetAt, scope: rateLimit.scope, type: rateLimit.type, policy: rateLimit.policy,
        });
      }

      // The budget is spent upstream: every user of the shared limiter waits for the reset, not only
      // the caller that heard it (the others' calls would only draw more 429s).
      const spentUntil = rateLimit?.exhausted && rateLimit.resetAt !== null ? rateLimit.resetAt : null;
      if (status < 400) {
        if (this.limiter && spentUntil !== null) await this.limiter.pauseUntil(spentUntil, `${this.name ?? "upstream"} reported its budget spent`);
        return this.success(call, response, text, o.schema as Schema<T> | undefined, rateLimit, requestId);
      }

      // A 429, or a refusal whose headers show the budget is spent (GitHub's 403), is a rate limit:
      // retried like a 429, and reported with the time the budget comes back.
      const rateLimited = status === 429 || (rateLimit?.exhausted === true && (status === 403 || this.retryOn(status)));
      const asked = parseRetryAfter(response.headers, now) ?? (rateLimited ? untilReset(rateLimit, now) : null);
      if (this.limiter && rateLimited) await this.limiter.pauseUntil(now + (asked ?? RATE_LIMIT_FALLBACK_MS), `${this.name ?? "upstream"} answered ${status}`);
      const retryable = canRetry && this.retryOn(rateLimited ? 429 : status);
      const tooLong = asked !== null && asked > this.maxRetryAfterMs;
      const delay = retryable && !tooLong ? (asked ?? nextDelay(backoff, attempt)) : null;
      const failure = {
        ...this.failure(call, requestId),
        status,
        body: this.mask(text.slice(0, BODY_EXCERPT)),
        rateLimit,
      };
      if (delay === null) {
        const error = rateLimited
          ? new RateLimitedError({ ...failure, retryAfter: new Date(now + (asked ?? RATE_LIMIT_FALLBACK_MS)) })
          : new HttpError(asked === null ? failure : { ...failure, retryAfter: new Date(now + asked) });
        throw this.failed(call, error, retryable && tooLong ? { gaveUp: `the server asked to wait ${asked} ms, more than maxRetryAfter (${this.maxRetryAfterMs} ms)` } : {});
      }
      this.logger.warn("http.retry", { ...this.fields(call), status, requestId, error: `answered ${status}`, delayMs: delay, ...(asked !== null ? { retryAfterMs: asked } : {}) });
      await wait(this.clock, delay, signal);
    }
  }

  /**
   * Waits for the shared budget, at most `maxRetryAfter`: a budget paused for longer (an upstream's
   * monthly quota spent) ends the request at once with `RateLimitedError` and the pause's end as
   * `retryAfter`, so a task backs off and a job retries then, instead of holding its slot until its
   * timeout. No request was sent: the 429 is the budget's own answer.
   */
  private async takeToken(call: Call, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.limiter!.acquire({ signal, timeout: this.maxRetryAfterMs });
    } catch (error) {
      const retryAt = (error as { retryAt?: unknown } | null)?.retryAt;
      if (typeof retryAt !== "number" || signal?.aborted) throw error;
      const failure = { ...this.failure(call, null), status: 429, body: "", rateLimit: null, retryAfter: new Date(retryAt) };
      throw this.failed(call, new RateLimitedError(failure), { gaveUp: `limiter "${this.limiter!.name}" gives no token before ${new Date(retryAt).toISOString()}, past maxRetryAfter (${this.maxRetryAfterMs} ms)` });
    }
  }

  /** One attempt under the per-attempt timeout, the body read included. */
  private async attempt(url: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      controller.abort(new CallTimeoutError(timeoutMs));
    }, timeoutMs);
    try {
      const response = await this.fetch(url, { ...init, signal: controller.signal });
      const text = init.method === "HEAD" ? "" : await response.text();
      return { kind: "response", response, text };
    } catch (error) {
      // The caller's abort is thrown by the loop, which checks the signal first.
      if (timedOut) return { kind: "timeout" };
      return { kind: "network", error };
    } finally {
      this.clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private success<T>(call: Call, response: Response, text: string, schema: Schema<T> | undefined, rateLimit: RateLimit | null, requestId: string | null): HttpResponse<T> {
    let data: unknown = text === "" ? undefined : text;
    const json = /[/+]json\b/i.test(response.headers.get("content-type") ?? "");
    let issues: readonly SchemaIssue[] | null = null;
    if (text !== "" && (json || schema)) {
      try {
        data = JSON.parse(text);
      } catch (error) {
        if (schema) issues = [{ path: [], message: `the body is not JSON (${(error as Error).message})` }];
      }
    }
    if (schema && issues === null) {
      const parsed = schema.safeParse(data);
      if (parsed.success) data = parsed.data;
      else issues = parsed.error.issues;
    }
    if (issues !== null) {
      const failure = { ...this.failure(call, requestId), status: response.status, body: this.mask(text.slice(0, BODY_EXCERPT)) };
      throw this.failed(call, new HttpSchemaError(failure, issues.map((i) => ({ path: i.path, message: this.mask(i.message) }))));
    }
    return { status: response.status, data: data as T, headers: response.headers, rateLimit, attempts: call.attempt, requestId, url: call.url };
  }

  private failed<E extends Error & { code: string }>(call: Call, error: E, extra: Record<string, unknown> = {}): E {
    const e = error as E & { status?: number; requestId?: string | null; retryAfter?: Date };
    this.logger.error("http.failed", {
      ...this.fields(call),
      status: e.status ?? null,
      requestId: e.requestId ?? null,
      attempts: call.attempt,
      code: e.code,
      error: e.message,
      ...(e.retryAfter ? { retryAfter: e.retryAfter.getTime() } : {}),
      ...extra,
    });
    return error;
  }

  private fields(call: Call): Record<string, unknown> {
    return { ...(this.name ? { client: this.name } : {}), method: call.method, url: call.url, attempt: call.attempt, maxAttempts: call.maxAttempts };
  }

  private failure(call: Call, requestId: string | null): HttpFailure {
    return { method: call.method, url: call.url, attempts: call.attempt, requestId };
  }

  private url(path: string, query: Record<string, QueryValue>): URL {
    let url: URL;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) url = new URL(path);
    else if (this.baseUrl) url = new URL(`${this.baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`);
    else throw new InvalidInputError(`http: ${describe(path)} is not an absolute URL and the client has no baseUrl`);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
    }
    if (this.apiKey && "query" in this.apiKey) url.searchParams.set(this.apiKey.query, this.apiKey.value);
    return url;
  }

  /** The URL as logs and errors show it: no userinfo, no query-parameter API key. */
  private redactUrl(url: URL): string {
    const safe = new URL(url.toString());
    safe.username = "";
    safe.password = "";
    if (this.apiKey && "query" in this.apiKey) safe.searchParams.delete(this.apiKey.query);
    return safe.toString();
  }

  /** The API key never leaves in a log or an error, even if an upstream echoes it back. */
  private mask(text: string): string {
    const key = this.apiKey?.value;
    return key ? text.split(key).join("[redacted]") : text;
  }

  private requestHeaders(own: Record<string, string> | undefined, hasBody: boolean): Headers {
    const headers = new Headers({ accept: "application/json" });
    for (const [k, v] of Object.entries(this.headers)) headers.set(k, v);
    for (const [k, v] of Object.entries(own ?? {})) headers.set(k, v);
    if (hasBody && !headers.has("content-type")) headers.set("content-type", "application/json");
    if (this.apiKey && "header" in this.apiKey) headers.set(this.apiKey.header, this.apiKey.value);
    return headers;
  }
}

/** How long until an exhausted budget refills, when the headers say and it is still ahead. */
function untilReset(rateLimit: RateLimit | null, now: number): number | null {
  if (!rateLimit?.exhausted || rateLimit.resetAt === null || rateLimit.resetAt <= now) return null;
  return rateLimit.resetAt - now;
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:9` rather than undici's bare `fetch failed`. */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return describe(error);
  const cause = error.cause;
  const detail = cause instanceof Error ? cause.message || (cause as { code?: string }).code : undefined;
  return detail && detail !== error.message ? `${error.message}: ${detail}` : error.message;
}

/** Waits `ms` on the clock; the caller's abort ends the wait at once with its reason. */
function wait(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let timer: TimerHandle | undefined = undefined;
    const onAbort = () => {
      if (timer !== undefined) clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
  });
}

