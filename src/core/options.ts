import * as z from "zod";
import { toMs, type Duration } from "./duration.js";
import { InvalidInputError, preview } from "./errors.js";

/** A duration option, parsed to milliseconds, with `toMs`'s message when it is malformed. */
export const durationMs = z.custom<Duration>((v) => typeof v === "number" || typeof v === "string", "expected a duration").transform((value, ctx) => {
  try {
    return toMs(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

export const fn = <T>(what: string) => z.custom<T>((v) => typeof v === "function", `expected ${what}`);

/**
 * Parses options at a boundary. A failure becomes one `InvalidInputError` that names where the
 * options were given, the path of each bad field and the value it had.
 */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    // A record's key is part of the path: a long one is cut like any value shown.
    const path = issue.path.map((part) => (typeof part === "string" && part.length > 80 ? preview(part) : String(part))).join(".");
    const given = path ? lookup(value, issue.path) : value;
    const shown = issue.code === "unrecognized_keys" ? "" : ` (got ${preview(given)})`;
    // zod's own messages may quote what was given (unrecognized keys, say): cut like a value.
    const message = issue.message.length > 200 ? `${issue.message.slice(0, 200)}…` : issue.message;
    return `${path ? `${path}: ` : ""}${message}${shown}`;
  });
  const shownProblems = problems.length > 5 ? [...problems.slice(0, 5), `and ${problems.length - 5} more`] : problems;
  throw new InvalidInputError(`${where}: ${shownProblems.join("; ")}`);
}

function lookup(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = current == null ? undefined : (current as Record<PropertyKey, unknown>)[key];
  return current;
}
