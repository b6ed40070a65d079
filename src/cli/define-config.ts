// What a `tickwork` config file exports. Types only (and an identity helper), so the core can
// re-export them without pulling in Node.
import type { Tickwork, TickworkOptions } from "../tickwork.js";
import type { QueueOptions } from "../queue/options.js";
import type { TaskOptions } from "../schedule/task.js";
import type { ServeOptions } from "../server/index.js";

/** The database the command runs on (`--db`), so `setup` can keep the app's own tables beside tickwork's. */
export type ConfigDatabase = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema?: string };

/**
 * Why the command line opened the engine: `serve` (`tickwork start`: workers, tasks and the server
 * run), `operate` (a command that changes something: `tasks run`, `jobs retry`, `queues pause`...) or
 * `inspect` (a command that only reads: `status`, `jobs list`, `tasks`, `queues status`, `top`).
 */
export type ConfigPurpose = "serve" | "operate" | "inspect";

export interface ConfigContext {
  database: ConfigDatabase;
  /** The command loading the config: `start`, `status`, `jobs list`, `tasks run`... */
  command: string;
  /**
   * Why the engine was opened. Every command runs `setup` so that what it declares (queues, tasks) is
   * known, but only `serve` lets it write to tickwork's database: under `operate` and `inspect`, an
   * enqueue (or any other write) from setup is refused and the command exits 2 naming it. Guard the
   * app's own side effects (seeding its tables, opening listeners) on `purpose === "serve"` too.
   */
  purpose: ConfigPurpose;
}

/** Undoes what `setup` opened (connections, clients); runs after the engine has stopped. */
export type ConfigTeardown = () => void | Promise<void>;

/** Declares whatever needs the engine itself (queue handles in tasks, the app's connections). */
export type ConfigSetup = (tw: Tickwork, context: ConfigContext) => void | ConfigTeardown | Promise<void | ConfigTeardown>;

/** Engine options a config may set; the command line owns the store, the clock, migrations and signals. */
export type ConfigEngineOptions = Omit<TickworkOptions, "store" | "clock" | "migrate" | "handleSignals">;

/**
 * A config file's default export: `export default defineConfig({ queues, tasks, engine, server, setup })`, or
 * a bare setup function `(tw, context) => teardown?`. Queues and tasks are declared in that order,
 * then `setup` runs.
 */
export interface TickworkConfig<Payloads extends Record<string, unknown> = Record<string, unknown>> {
  /** Queue name to options, as `tw.queue(name, options)` takes them. */
  queues?: { [Name in keyof Payloads]: QueueOptions<Payloads[Name]> };
  /** Task name to options, as `tw.task(name, options)` takes them. */
  tasks?: Record<string, TaskOptions>;
  engine?: ConfigEngineOptions;
  /** The admin API and dashboard of `tickwork start`: `token`, `auth`, `port`, `host`... (`--port` and `--host` win). */
  server?: ServeOptions;
  setup?: ConfigSetup;
}

/** Types a config file; it returns the config unchanged. */
export function defineConfig<Payloads extends Record<string, unknown>>(config: TickworkConfig<Payloads>): TickworkConfig<Payloads> {
  return config;
}
