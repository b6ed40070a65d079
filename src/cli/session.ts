import { createTickwork, type Tickwork, type TickworkOptions } from "../tickwork.js";
import type { LogEvent, LoggerOption } from "../core/logger.js";
import type { Store } from "../store/store.js";
import { logLevelOption, stringOption, type Parsed } from "./args.js";
import { findConfig, loadConfig, type LoadedConfig } from "./config.js";
import { DEFAULT_DB, openStore, parseDatabase } from "./database.js";
import type { ConfigDatabase, ConfigTeardown } from "./define-config.js";
import { CommandFailure, ConfigError, UsageError, isInputError, messageOf } from "./errors.js";

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
   * `start`: may create the database, migrates it, and sends events to the config's sink or stdout.
   * `command`: a one-shot command on an existing, migrated database; events of `warn` and up to stderr.
   */
  mode: "start" | "command";
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
 * One-shot commands also get a producer handle for every queue that has jobs in the store, so
 * `--queue` works without the config that declares it.
 */
export async function openSession(parsed: Parsed, options: SessionOptions): Promise<Session> {
  const database = databaseOf(parsed, options.command);
  const logLevel = logLevelOption(parsed, options.command);
  const { config } = options;
  const store = openStore(database, { create: options.mode === "start" });
  let tw: Tickwork | undefined;
  let teardown: ConfigTeardown | undefined;
  try {
    if (options.mode === "command") await requireMigrated(store);
    tw = await createEngine(store, config, options.mode, logLevel);
    teardown = await applyConfig(tw, config, { database, command: options.command });
    if (options.mode === "command") await declareStoredQueues(tw);
  } catch (error) {
    // The error that stopped the start is the one to report, not a later one while cleaning up.
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

async function createEngine(store: Store, config: LoadedConfig | undefined, mode: SessionOptions["mode"], logLevel: TickworkOptions["logLevel"]): Promise<Tickwork> {
  const engine = config?.engine ?? {};
  const options: TickworkOptions = {
    ...engine,
    store,
    migrate: mode === "start",
    // `start` stops on SIGTERM and SIGINT itself: it also closes the server and runs the teardown.
    handleSignals: false,
    logLevel: logLevel ?? (engine.logLevel as TickworkOptions["logLevel"]) ?? (mode === "start" ? "info" : "warn"),
    logger: (engine.logger as LoggerOption | undefined) ?? (mode === "command" ? stderrEvents : undefined),
  };
  try {
    return await createTickwork(options);
  } catch (error) {
    if (config && isInputError(error)) throw new ConfigError(config.file, `engine: ${error.message.replace(/^createTickwork: /, "")}`);
    throw error;
  }
}

/**
 * A one-shot command's events: warnings and worse, as JSON lines on stderr, where they do not mix
 * with the command's output. The start-up statement is left out: the command itself says which
 * database it works on, and it would otherwise open every `tickwork status`.
 */
function stderrEvents(event: LogEvent): void {
  if (event.event !== "engine.started") process.stderr.write(`${JSON.stringify(event)}\n`);
}

async function applyConfig(tw: Tickwork, config: LoadedConfig | undefined, context: { database: ConfigDatabase; command: string }): Promise<ConfigTeardown | undefined> {
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
    throw new CommandFailure(`config ${config.file}: setup failed: ${messageOf(error)}`);
  }
  if (result === undefined || typeof result === "function") return result as ConfigTeardown | undefined;
  throw new ConfigError(config.file, `setup returned ${typeof result === "object" ? "an object" : String(result)}: return nothing, or a teardown function`);
}

async function declareStoredQueues(tw: Tickwork): Promise<void> {
  const declared = new Set(tw.status().queues.map((q) => q.name));
  for (const { queue } of await tw.jobs.counts()) if (!declared.has(queue)) tw.queue(queue);
}
