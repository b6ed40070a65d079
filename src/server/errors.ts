import type { Context } from "hono";
import type * as z from "zod";
import { InvalidInputError, StoreUnavailableError, errorText, type TickworkError } from "../core/errors.js";
import { JobNotFoundError, JobStateError, UnknownQueueError } from "../queue/errors.js";
import type { Logger } from "../core/logger.js";

export interface Issue {
  /** The field at fault, e.g. `status` or `until`; empty for the whole input. */
  path: string;
  message: string;
}

type ErrorStatus = 400 | 401 | 404 | 409 | 413 | 500 | 503;

/**
 * An answer the admin API gives on purpose. Its body is `{ error, code?, message, issues? }`: `error`
 * a short code to branch on, `message` for a person, naming the field at fault, and `code` the
 * engine's own `TW_*` code when the engine refused (the code a script using tickwork as a library
 * would see). Not a `TickworkError`: it never leaves the app (`errorResponse` turns it into the
 * answer), and its `error` codes are the API's own.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
    readonly issues?: Issue[],
    readonly tickworkCode?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A zod failure as a 400 naming each field, e.g. `status: expected one of pending, running...`. */
export function invalid(code: "invalid_query" | "invalid_body" | "invalid_path", error: z.ZodError): ApiError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  return new ApiError(400, code, issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), issues);
}

/**
 * The engine's typed errors mapped to statuses; anything else is a 500 whose details go to the
 * engine's log (`server.error`), never to the client: a driver's message can carry SQL and values.
 */
export function errorResponse(c: Context, error: unknown, logger: Logger): Response {
  const known = toApiError(error);
  if (known) {
    const { status, code, message, issues, tickworkCode } = known;
    return c.json({ error: code, ...(tickworkCode ? { code: tickworkCode } : {}), message, ...(issues ? { issues } : {}) }, status);
  }
  logger.error("server.error", { method: c.req.method, path: c.req.path, error: errorText(error) });
  return c.json({ error: "internal_error", message: "the request failed; the server's log has the details (event server.error)" }, 500);
}

function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof JobNotFoundError) return new ApiError(404, "not_found", error.message, undefined, error.code);
  if (error instanceof JobStateError) return new ApiError(409, "conflict", error.message, undefined, error.code);
  if (error instanceof UnknownQueueError) return new ApiError(400, "unknown_queue", error.message, undefined, error.code);
  if (error instanceof InvalidInputError || isInputError(error)) return new ApiError(400, "invalid_input", error.message, undefined, error.code);
  if (error instanceof StoreUnavailableError) return new ApiError(503, "store_unavailable", "the store cannot be reached; try again", undefined, error.code);
  return null;
}

/**
 * A refusal of the caller's input by any copy of tickwork's modules: input errors carry a
 * `TW_INVALID_*` or `TW_UNKNOWN_*` code, matched by code since a second copy's classes differ.
 */
function isInputError(error: unknown): error is TickworkError {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === "string" && /^TW_(INVALID|UNKNOWN)_[A-Z_]+$/.test(code);
}
