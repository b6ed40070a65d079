import { createTickwork, type Tickwork, type TickworkOptions } from "../tickwork.js";
import type { LogEvent, LoggerOption } from "../core/logger.js";
import type { Store } from "../store/store.js";
import { flag, logLevelOption, stringOption, type Parsed } from "./args.js";
import { findConfig, loadConfig, type LoadedConfig } from "./config.js";
import { DEFAULT_DB, openStore, parseDatabase } from "./database.js";
import type { ConfigContext, ConfigDatabase, ConfigPurpose, ConfigTeardown } from "./define-config.js";
import { CommandFailure, ConfigError, UsageError, isInputError, messageOf } from "./errors.js";
import { eventLine } from "./output.js";
import { WriteRefused, guardWrites } from "./write-guard.js";

/** An engine opened for one command, with the config's queues, tasks and setup applied. */
export interface Session {
  tw: Tickwork;
  database: ConfigDatabase;
  config: LoadedConfig | undefined;
  /** Stops the engine (which closes the store), then runs the config's teardown. */
  close(): Promise<void>;
}

export interface SessionOptions {
  /** The command, for messages and for `setup`'s context: "status", "jobs list"... */
  command: string;
  /** From `configOf`: loaded before the session, so that a bad config fails before the database is touched. */
  config: LoadedConfig | undefined;
  /**
   * `serve` (`start`): may create the database, migrates it, lets setup write, and sends events to the
   * config's sink, else to stdout. `operate` and `inspect`: a one-shot command on an existing, migrated
   * database, with events of `warn` and up on stderr; setup's writes are refused, and under `inspect`
   * every write of the command itself too. Events are text lines, or JSON lines with --json.
   */
  purpose: ConfigPurpose;
  /** Where events go instead, over the config's logger too: `top` owns the terminal and shows them itself. */
  events?: (event: LogEvent) => void;
}

export function databaseOf(parsed: Parsed, command: string): ConfigDatabase {
  return parseDatabase(stringOption(parsed, "db") ?? (process.env.TICKWORK_DB || DEFAULT_DB), stringOption(parsed, "schema"), command);
}

/** The config file: required by the commands that run its code, used when present by the others. */
export async function configOf(parsed: Parsed, command: string, need: "required" | "optional"): Promise<LoadedConfig | undefined> {
  const path = findConfig(stringOption(parsed, "config") ?? (process.env.TICKWORK_CONFIG || undefined), process.cwd());
  if (path !== undefined) return loadConfig(path, process.cwd());
  if (need === "optional") return undefined;
  throw new UsageError("no config file: pass --config <file>, set TICKWORK_CONFIG, or create ./tickwork.config.ts", command);
}

/**
 * Opens the store, creates the engine, declares the config's queues and tasks and runs its setup.
 * Setup runs with the store's writes refused unless the purpose is `serve`, and an `inspect` command
 * keeps them refused to its end: whatever a config does, a read-only command writes nothing.
 * One-shot commands also get a producer handle for every queue that has jobs in the store, so
 * `--queue` works without the config that declares it.
 */
export async function openSession(parsed: Parsed, options: SessionOptions): Promise<Session> {
  const { command, config, purpose } = options;
  const database = databaseOf(parsed, command);
  const logLevel = logLevelOption(parsed, command);
  const serving = purpose === "serve";
  const guard = guardWrites(openStore(database, { create: serving }));
  const store = guard.store;
  let tw: Tickwork | undefined;
  let teardown: ConfigTeardown | undefined;
  try {
    if (!serving) await requireMigrated(store);
    tw = await createEngine(store, config, { purpose, logLevel, json: flag(parsed, "json"), events: options.events });
    guard.refusing = !serving;
    teardown = await applyConfig(tw, config, { database, command, purpose });
    guard.refusing = purpose === "inspect";
    if (!serving) await declareStoredQueues(tw);
  } catch (error) {
    // The error that stopped the start is the one to report, not a later one while cleaning up.
    guard.refusing = false;
    await (tw ? tw.stop() : store.close()).catch(() => {});
    await Promise.resolve(teardown?.()).catch(() => {});
    throw error;
  }
  const engine = tw;
  return {
    tw: engine,
    database,
    config,
    async close() {
      try {
        await engine.stop();
      } finally {
        await teardown?.();
      }
    },
  };
}

async function requireMigrated(store: Store): Promise<void> {
  const { current, latest } = await store.schemaVersion();
  if (current === 0) throw new CommandFailure("the database has no tickwork tables: run `tickwork migrate` (or `tickwork start`, which migrates) first");
  if (current < latest) throw new CommandFailure(`the database schema is at version ${current} and this tickwork needs ${latest}: run \`tickwork migrate\``);
}

interface EngineChoices {
  purpose: ConfigPurpose;
  logLevel: TickworkOptions["logLevel"];
  /** --json: events as JSON lines, else as text lines. */
  json: boolean;
  events: SessionOptions["events"];
}

async function createEngine(store: Store, config: LoadedConfig | undefined, { purpose, logLevel, json, events }: EngineChoices): Promise<Tickwork> {
  const engine = config?.engine ?? {};
  const serving = purpose === "serve";
  const options: TickworkOptions = {
    ...engine,
    store,
    migrate: serving,
    // `start` stops on SIGTERM and SIGINT itself: it also closes the server and runs the teardown.
    handleSignals: false,
    logLevel: logLevel ?? (engine.logLevel as TickworkOptions["logLevel"]) ?? (serving ? "info" : "warn"),
    // `start --json` keeps the engine's own default, JSON lines on stdout.
    logger: events ?? (engine.logger as LoggerOption | undefined) ?? (serving ? (json ? undefined : stdoutText) : commandEvents(json)),
  };
  try {
    return await createTickwork(options);
  } catch (error) {
    if (config && isInputError(error)) throw new ConfigError(config.file, `engine: ${error.message.replace(/^createTickwork: /, "")}`);
    throw error;
  }
}

/** `tickwork start`'s events, one text line each on stdout. */
const stdoutText = { name: "text lines (stdout)", write: (event: LogEvent) => void process.stdout.write(`${eventLine(event)}\n`) };

/**
 * A one-shot command's events: warnings and worse, on stderr, where they do not mix with the
 * command's output; text lines, or JSON lines with --json. The start-up statement is left out: the
 * command itself says which database it works on, and it would otherwise open every `tickwork status`.
 */
function commandEvents(json: boolean): (event: LogEvent) => void {
  return (event) => {
    if (event.event !== "engine.started") process.stderr.write(`${json ? JSON.stringify(event) : eventLine(event)}\n`);
  };
}

async function applyConfig(tw: Tickwork, config: LoadedConfig | undefined, context: ConfigContext): Promise<ConfigTeardown | undefined> {
  if (!config) return undefined;
  const declare = (what: () => void) => {
    try {
      what();
    } catch (error) {
      throw isInputError(error) ? new ConfigError(config.file, error.message) : error;
    }
  };
  for (const [name, options] of config.queues) declare(() => tw.queue(name, options));
  for (const [name, options] of config.tasks) declare(() => tw.task(name, options as Parameters<Tickwork["task"]>[1]));
  if (!config.setup) return undefined;
  let result: unknown;
  try {
    result = await config.setup(tw, context);
  } catch (error) {
    if (isInputError(error)) throw new ConfigError(config.file, `setup: ${error.message}`);
    const refused = refusal(error);
    if (refused) throw refusedInSetup(config.file, refused, context);
    throw new CommandFailure(`config ${config.file}: setup failed: ${messageOf(error)}`);
  }
  if (result === undefined || typeof result === "function") return result as ConfigTeardown | undefined;
  throw new ConfigError(config.file, `setup returned ${typeof result === "object" ? "an object" : String(result)}: return nothing, or a teardown function`);
}

/** The refused write behind an error, also when setup wrapped it in an error of its own. */
function refusal(error: unknown): WriteRefused | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 10 && e instanceof Error; depth++) {
    if (e instanceof WriteRefused) return e;
    e = e.cause;
  }
  return undefined;
}

/** A config whose setup writes outside `tickwork start`: the contract is broken, so exit 2, saying how to keep it. */
function refusedInSetup(file: string, error: WriteRefused, { command, purpose }: ConfigContext): ConfigError {
  return new ConfigError(
    file,
    `setup wrote to the database, ${error.operation}, under \`tickwork ${command}\`, which runs it with context.purpose "${purpose}": setup may write only when context.purpose is "serve" (tickwork start); nothing was written`,
  );
}

async function declareStoredQueues(tw: Tickwork): Promise<void> {
  const declared = new Set(tw.status().queues.map((q) => q.name));
  for (const { queue } of await tw.jobs.counts()) if (!declared.has(queue)) tw.queue(queue);
}
