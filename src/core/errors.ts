/**
 * Every error tickwork throws on purpose is a `TickworkError` with a short, searchable `code`.
 * Input errors are thrown before anything is written, so a caller that catches one has lost nothing.
 */
export class TickworkError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A value given by the caller is not acceptable (bad duration, option, payload...). */
export class InvalidInputError extends TickworkError {
  constructor(message: string, code = "TW_INVALID_INPUT") {
    super(code, message);
  }
}

export class InvalidDurationError extends InvalidInputError {
  constructor(readonly value: unknown) {
    super(
      `invalid duration ${preview(value)}: expected milliseconds (a finite number from 0 to 100 years) or a string such as "500ms", "30s", "5m", "1h", "2d"`,
      "TW_INVALID_DURATION",
    );
  }
}

export class InvalidPayloadError extends InvalidInputError {
  constructor(readonly reason: string, where?: string, subject = "job payload") {
    super(`${where ? `${where}: ` : ""}${subject} is not JSON-serialisable: ${reason}`, "TW_INVALID_PAYLOAD");
  }
}

/**
 * A job's payload is larger, as UTF-8 JSON, than its queue's `maxPayloadBytes` (`TW_PAYLOAD_TOO_LARGE`):
 * refused before anything is written.
 */
export class PayloadTooLargeError extends InvalidInputError {
  constructor(where: string, readonly bytes: number, readonly limit: number, queue: string) {
    super(`${where} is ${bytes} bytes as JSON, over queue "${queue}"'s maxPayloadBytes of ${limit}: keep large data elsewhere and enqueue a reference`, "TW_PAYLOAD_TOO_LARGE");
  }
}

/**
 * The store could not be reached or failed below the level of any one job or task.
 * This is the only kind of failure that escapes `tick()`: runtimes retry it (the Durable Object
 * alarm's own retry, the Node runtime's reconnect loop).
 */
export class StoreUnavailableError extends TickworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TW_STORE_UNAVAILABLE", message, options);
  }
}

/**
 * The database is there but cannot be used as given (`TW_STORE_SETUP`): it does not exist, the login
 * or a permission is refused, the file cannot be opened. Not retried, unlike `StoreUnavailableError`:
 * waiting does not fix it, the message says what will.
 */
export class StoreSetupError extends TickworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TW_STORE_SETUP", message, options);
  }
}

/**
 * The database holds a tickwork schema this version does not know (`TW_SCHEMA_UNKNOWN`): its recorded
 * migration steps are not this version's, as when it was migrated by an unreleased build. Nothing is
 * changed; migrate a new database (or PostgreSQL schema), or drop its `tickwork_` tables.
 */
export class SchemaMismatchError extends TickworkError {
  constructor(readonly version: number, readonly recorded: string, readonly expected: string) {
    super(
      "TW_SCHEMA_UNKNOWN",
      `the database's tickwork schema is not this version's: its migration ${version} is "${recorded}", this version's is "${expected}" (migrated by an unreleased build?); migrate a new database or schema, or drop its tickwork_ tables`,
    );
  }
}

/** An outbound call (a delivery's send, a fan-out's push, an HTTP attempt) that did not answer within its timeout. */
export class CallTimeoutError extends TickworkError {
  constructor(ms: number) {
    super("TW_CALL_TIMEOUT", `no answer within ${ms} ms`);
  }
}

/**
 * An optional peer dependency that a subpath needs (pg for tickwork/postgres, better-sqlite3 for
 * SQLite on Node 20, prom-client and @hono/node-server for tickwork/server) is not installed.
 */
export class MissingPeerError extends TickworkError {
  readonly packageName: string;

  constructor(packageName: string, usedBy: string, options?: { cause?: unknown }) {
    super("TW_MISSING_PEER", `${usedBy} needs the package "${packageName}": install it with \`npm install ${packageName}\``, options);
    this.packageName = packageName;
  }
}

/**
 * Thrown by a job handler to choose when the next attempt runs, e.g. from an upstream's
 * `Retry-After`. Any thrown error carrying a `retryAfter` property is honoured the same way.
 */
export class RetryAfterError extends TickworkError {
  readonly retryAfter: number | string | Date;

  constructor(message: string, retryAfter: number | string | Date) {
    super("TW_RETRY_AFTER", message);
    this.retryAfter = retryAfter;
  }
}

/**
 * A value as an error message shows it. Long values are cut (a 1 MB key must not make a 1 MB
 * message): a string longer than 200 characters is named by its length and its start.
 */
export function describe(value: unknown): string {
  return preview(value, 200);
}

/** `describe` with a chosen length: strings over `max` characters, other values over twice that, are cut. */
export function preview(value: unknown, max = 80): string {
  if (typeof value === "string" && value.length > max) return `a string of ${value.length} characters starting ${JSON.stringify(value.slice(0, max))}`;
  const shown = render(value);
  return shown.length > max * 2 ? `${shown.slice(0, max * 2)}…` : shown;
}

function render(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value == null) return String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "function") return "a function";
  try {
    return JSON.stringify(value) ?? Object.prototype.toString.call(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A job's or task's error as it is stored: the message plus the stack's first frames. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const stack = error.stack?.split("\n").slice(0, 6).join("\n");
    return stack && stack.includes(error.message) ? stack : `${error.name}: ${error.message}`;
  }
  return describe(error);
}
