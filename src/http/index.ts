// tickwork/http: a typed fetch wrapper with retries, per-attempt timeouts and rate-limit headers.
export {
  createHttpClient,
  HttpClient,
  type HttpClientOptions,
  type HttpResponse,
  type RequestOptions as HttpRequestOptions,
  type RetryOptions as HttpRetryOptions,
  type ApiKey as HttpApiKey,
  type Schema as HttpSchema,
  type QueryValue as HttpQueryValue,
  type FetchLike,
} from "./client.js";
export { HttpRequestError, HttpError, RateLimitedError, HttpTimeoutError, HttpNetworkError, HttpSchemaError, type HttpFailure, type HttpStatusFailure, type SchemaIssue } from "./errors.js";
export { parseRateLimit, type RateLimit, type RateLimitWindow } from "./rate-limit.js";
export { parseRetryAfter, requestIdOf } from "./headers.js";
