import { TickworkError } from "../core/errors.js";
import type { RateLimit } from "./rate-limit.js";

/** What every failed request reports: which request, how many attempts, and the upstream's id for it. */
export interface HttpFailure {
  method: string;
  /** The URL without credentials or an API key sent as a query parameter: safe to log. */
  url: string;
  attempts: number;
  /** The upstream's request id (`cf-ray`, `x-request-id`...) from the last response, if any. */
  requestId: string | null;
}

/** A request that failed for good. Each kind below has its own `code`. */
export class HttpRequestError extends TickworkError implements HttpFailure {
  readonly method: string;
  readonly url: string;
  readonly attempts: number;
  readonly requestId: string | null;

  constructor(code: string, message: string, failure: HttpFailure, options?: { cause?: unknown }) {
    super(code, message, options);
    this.method = failure.method;
    this.url = failure.url;
    this.attempts = failure.attempts;
    this.requestId = failure.requestId;
  }
}

export interface HttpStatusFailure extends HttpFailure {
  status: number;
  /** The start of the response body (the API key, if the upstream echoed it, is masked). */
  body: string;
  rateLimit: RateLimit | null;
  /** When the server said to come back (`Retry-After`), as a time on the client's clock. */
  retryAfter?: Date;
}

/**
 * A response with a failing status that was not retried (a 4xx) or still failed on the last
 * attempt (a 5xx). When the server sent `Retry-After` (a 503 for maintenance), `retryAfter` holds
 * that time, so the queue retries then and the scheduler backs off until then.
 */
export class HttpError extends HttpRequestError {
  readonly status: number;
  readonly body: string;
  readonly rateLimit: RateLimit | null;
  readonly retryAfter?: Date;

  constructor(failure: HttpStatusFailure, message?: string, code = "TW_HTTP_STATUS") {
    super(code, message ?? `${failure.method} ${failure.url} answered ${failure.status}${suffix(failure)}`, failure);
    this.status = failure.status;
    this.body = failure.body;
    this.rateLimit = failure.rateLimit;
    if (failure.retryAfter !== undefined) this.retryAfter = failure.retryAfter;
  }
}

/**
 * The upstream is rate-limiting this client: a 429, or a failing response whose rate-limit headers
 * show an exhausted budget (GitHub answers 403 with `x-ratelimit-remaining: 0`), when retries were
 * used up or the wait was longer than `maxRetryAfter`. It always carries `retryAfter`, from
 * `Retry-After`, else the budget's reset, else a minute, so tickwork's queue retries the job then and
 * the scheduler backs the task off until then (`nextRunAfter`) instead of counting a failure.
 */
export class RateLimitedError extends HttpError {
  declare readonly retryAfter: Date;

  constructor(failure: HttpStatusFailure & { retryAfter: Date }) {
    super(failure, `${failure.method} ${failure.url} is rate limited (${failure.status}); retry after ${failure.retryAfter.toISOString()}${suffix(failure)}`, "TW_HTTP_RATE_LIMITED");
  }
}

/** The last attempt took longer than the per-attempt timeout. */
export class HttpTimeoutError extends HttpRequestError {
  constructor(
    failure: HttpFailure,
    readonly timeoutMs: number,
  ) {
    super("TW_HTTP_TIMEOUT", `${failure.method} ${failure.url} timed out after ${timeoutMs} ms (attempt ${failure.attempts})`, failure);
  }
}

/** The last attempt failed below HTTP: connection refused or reset, DNS, a body cut short. */
export class HttpNetworkError extends HttpRequestError {
  constructor(failure: HttpFailure, reason: string, cause: unknown) {
    super("TW_HTTP_NETWORK", `${failure.method} ${failure.url} failed: ${reason} (attempt ${failure.attempts})`, failure, { cause });
  }
}

export interface SchemaIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** The response body did not match the caller's schema. Not retried: the same body would come back. */
export class HttpSchemaError extends HttpRequestError {
  readonly status: number;
  readonly issues: readonly SchemaIssue[];
  readonly body: string;

  constructor(failure: HttpFailure & { status: number; body: string }, issues: readonly SchemaIssue[]) {
    const listed = issues.slice(0, 10).map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`);
    const more = issues.length > 10 ? `; and ${issues.length - 10} more` : "";
    super("TW_HTTP_SCHEMA", `${failure.method} ${failure.url} answered ${failure.status} with a body that does not match the schema: ${listed.join("; ")}${more}${suffix(failure)}`, failure);
    this.status = failure.status;
    this.issues = issues;
    this.body = failure.body;
  }
}

function suffix(failure: HttpFailure): string {
  return failure.requestId ? ` [request id ${failure.requestId}]` : "";
}
