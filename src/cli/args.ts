import { parseArgs } from "node:util";
import type { LogLevel } from "../core/logger.js";
import { UsageError } from "./errors.js";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** The value's placeholder in help, e.g. "<file>". */
  value?: string;
  description: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export const HELP_OPTION: OptionSpecs = { help: { type: "boolean", short: "h", description: "show this help" } };

export const DATABASE_OPTIONS: OptionSpecs = {
  db: { type: "string", value: "<file|url>", description: "an SQLite file or a postgres:// URL (default: $TICKWORK_DB, else ./tickwork.db)" },
  schema: { type: "string", value: "<name>", description: "the PostgreSQL schema of tickwork's tables (or ?schema= in the URL)" },
};

export const CONFIG_OPTION: OptionSpecs = {
  config: { type: "string", value: "<file>", description: "the config module (default: $TICKWORK_CONFIG, else ./tickwork.config.{ts,mts,js,mjs})" },
};

export const JSON_OPTION: OptionSpecs = { json: { type: "boolean", description: "print JSON instead of a table, and the engine's warnings as JSON lines" } };

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "critical"];

export const LOG_LEVEL_OPTION: OptionSpecs = {
  "log-level": { type: "string", value: "<level>", description: `the engine's events from this level on: ${LOG_LEVELS.join(", ")}` },
};

/** Parses a command's arguments strictly: an unknown option or a missing value is a usage error. */
export function parse(command: string, argv: string[], specs: OptionSpecs): Parsed {
  const options = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.short ? { type: spec.type, short: spec.short } : { type: spec.type }]));
  try {
    const { values, positionals, tokens } = parseArgs({ args: joinNegativeValues(argv, specs), options, strict: true, allowPositionals: true, tokens: true });
    refuseRepeats(command, tokens);
    return { values: values as Parsed["values"], positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(parseProblem(error, argv), command);
  }
}

/**
 * An option given twice (`--limit 10 --limit 20`) is refused, as the admin API refuses a repeated
 * query parameter: which one was meant is a guess, and the last one silently winning hides a typo.
 */
function refuseRepeats(command: string, tokens: readonly { kind: string; name?: string; rawName?: string }[]): void {
  const seen = new Map<string, number>();
  for (const token of tokens) if (token.kind === "option" && token.name !== undefined) seen.set(token.name, (seen.get(token.name) ?? 0) + 1);
  for (const [name, count] of seen) if (count > 1) throw new UsageError(`--${name}: given ${count} times; give it once`, command);
}

const NEGATIVE_NUMBER = /^-\d/;

/**
 * `--limit -5`: Node refuses a value that starts with a dash as ambiguous, and the user would be told
 * the wrong thing. A negative number cannot be an option, so it is taken as the value, and the command
 * then says why it is out of range.
 */
function joinNegativeValues(argv: string[], specs: OptionSpecs): string[] {
  const takesValue = new Set(Object.entries(specs).flatMap(([name, spec]) => (spec.type === "string" ? [`--${name}`, ...(spec.short ? [`-${spec.short}`] : [])] : [])));
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (takesValue.has(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(arg.startsWith("--") ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

/** Node's messages, shortened: they suggest `--` for positionals, which no command here takes. */
function parseProblem(error: unknown, argv: string[]): string {
  const { code, message } = error as { code?: string; message: string };
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (message.includes("argument missing")) return `${option} needs a value`;
    if (message.includes("ambiguous")) {
      // The value looks like an option: most often the value was left out.
      const next = argv[argv.indexOf(option) + 1];
      return `${option} needs a value, got the option ${next ?? "?"} (a value that starts with a dash is written ${option.startsWith("--") ? `${option}=-x` : `${option}-x`})`;
    }
    return `${option} takes no value`;
  }
  return message;
}

export function stringOption(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
}

export function flag(parsed: Parsed, name: string): boolean {
  return parsed.values[name] === true;
}

export function logLevelOption(parsed: Parsed, command: string): LogLevel | undefined {
  const value = stringOption(parsed, "log-level");
  if (value === undefined) return undefined;
  if (!(LOG_LEVELS as readonly string[]).includes(value)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${value}"`, command);
  return value as LogLevel;
}

/** The positionals a command takes: exactly `min` to `max` of them, named in the error. */
export function positionals(parsed: Parsed, command: string, what: string, min: number, max = min): string[] {
  const given = parsed.positionals;
  if (given.length < min) throw new UsageError(`missing ${what}`, command);
  if (given.length > max) throw new UsageError(`unexpected argument${given.length - max > 1 ? "s" : ""} ${given.slice(max).map((a) => `"${a}"`).join(", ")}`, command);
  return given;
}

export function noPositionals(parsed: Parsed, command: string): void {
  positionals(parsed, command, "", 0);
}

/** Help text: the usage line, the description, and the options in aligned columns. */
export function renderHelp(usage: string, description: string, specs: OptionSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => [`${spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.value ? ` ${spec.value}` : ""}`, spec.description] as const);
  const width = Math.max(...rows.map(([left]) => left.length));
  return [`Usage: ${usage}`, "", description, "", "Options:", ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`), ""].join("\n");
}
