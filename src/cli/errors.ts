/**
 * Exit codes: 0 done; 1 a runtime failure (the store is unreachable or not migrated, a job is not in
 * a state that allows the operation, a task run failed, setup threw); 2 a usage error (bad command,
 * option or value, or a config file that cannot be loaded or declares something invalid).
 *
 * The errors below are the command line's own: each ends a command with its exit code and one line,
 * and none reaches code that uses tickwork as a library, so they are not `TickworkError`s.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Wrong command, option or value on the command line. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose `--help` to point at, e.g. "jobs list". */
    readonly command?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** A config file that cannot be loaded or declares something invalid; the message names the file. */
export class ConfigError extends Error {
  constructor(file: string, problem: string) {
    super(`config ${file}: ${problem}`);
    this.name = "ConfigError";
  }
}

/** A failure at run time that is not a bug: the message says what to do. */
export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailure";
  }
}

/**
 * tickwork's own input errors carry `TW_INVALID_*` or `TW_UNKNOWN_*` codes. They are matched by code,
 * not by class: a TypeScript config loads its own copy of tickwork's modules.
 */
export function isInputError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === "string" && /^TW_(INVALID|UNKNOWN)_/.test(code);
}

/**
 * Runs a check of tickwork's bounds (`checkText`, `checkInstant`...) on a command-line value: its
 * refusal, which names the option, becomes this command's usage error.
 */
export function usage<T>(command: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (isInputError(error)) throw new UsageError(error.message, command);
    throw error;
  }
}

export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError || error instanceof ConfigError || isInputError(error) ? EXIT_USAGE : EXIT_FAILURE;
}

/** One line for the terminal: the message without the stack, whatever was thrown. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? text;
}
