import type { Tickwork } from "../../tickwork.js";
import type { ServeOptions, Serving } from "../../server/index.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, LOG_LEVEL_OPTION, flag, noPositionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import type { LoadedConfig } from "../config.js";
import { describeDatabase } from "../database.js";
import { ConfigError, EXIT_FAILURE, EXIT_OK, UsageError, isInputError } from "../errors.js";
import { note } from "../output.js";
import { configOf, openSession } from "../session.js";

const SIGNALS = ["SIGTERM", "SIGINT"] as const;
/** serve() reads its token from this variable when the config gives none. */
const TOKEN_VARIABLE = "TICKWORK_ADMIN_TOKEN";

export const startCommand: Command = {
  name: "start",
  summary: "run the config's workers and tasks, and the admin API and dashboard",
  args: "[options]",
  description: [
    "Migrates the database, declares the config file's queues and tasks, runs its setup, serves the admin API",
    "and dashboard, and runs workers and tasks until SIGTERM or SIGINT. Then it stops gracefully: the server",
    "closes, claiming stops, running jobs get the engine's shutdownGrace to finish, the rest are handed back,",
    "and the config's teardown runs; the exit code is 0. A second signal exits at once, with code 1.",
    "",
    `The server needs a token of 16 characters or more: ${TOKEN_VARIABLE}, or server.token in the config.`,
    "Events go to the config's engine.logger, else to stdout, one text line each (JSON lines with --json); these",
    "notes go to stderr.",
  ].join("\n"),
  options: {
    ...DATABASE_OPTIONS,
    ...CONFIG_OPTION,
    port: { type: "string", value: "<port>", description: "the server's port, 0 for any free one (default: the config's server.port, else 4000)" },
    host: { type: "string", value: "<address>", description: "the address it listens on (default: the config's server.host, else 127.0.0.1)" },
    "no-server": { type: "boolean", description: "run workers and tasks only, without the admin API and dashboard" },
    json: { type: "boolean", description: "events as JSON lines on stdout, instead of text lines" },
    ...LOG_LEVEL_OPTION,
  },
  async run(parsed) {
    noPositionals(parsed, "start");
    const listen = flag(parsed, "no-server") ? null : listenOptions(parsed);
    const config = (await configOf(parsed, "start", "required"))!;
    const serverOptions = listen ? serveOptions(config, listen) : null;
    const session = await openSession(parsed, { command: "start", config, purpose: "serve" });
    const { tw } = session;
    // Listening from here on: a signal while starting stops the engine as soon as it has started.
    const stopping = nextSignal();
    let server: Serving | undefined;
    try {
      if (serverOptions) server = await startServer(tw, config, serverOptions);
      await tw.start();
    } catch (error) {
      await server?.close().catch(() => {});
      await session.close().catch(() => {});
      throw error;
    }
    const { queues } = tw.status();
    const tasks = (await tw.scheduler.status()).tasks.map((t) => t.name);
    note(`tickwork: started on ${describeDatabase(session.database)} with ${config.file}`);
    note(`tickwork: queues ${queues.map((q) => (q.hasHandler ? `${q.name} (concurrency ${q.concurrency})` : `${q.name} (enqueue only)`)).join(", ") || "none"}; tasks ${tasks.join(", ") || "none"}`);
    note(server ? `tickwork: admin API and dashboard at ${server.url}` : "tickwork: no server (--no-server)");
    const signal = await stopping;
    note(`tickwork: ${signal}: stopping; running jobs get the shutdown grace to finish`);
    try {
      await server?.close();
    } finally {
      await session.close();
    }
    note("tickwork: stopped");
    return EXIT_OK;
  },
};

function listenOptions(parsed: Parsed): { port?: number; host?: string } {
  const port = stringOption(parsed, "port");
  const host = stringOption(parsed, "host");
  if (port !== undefined && (!/^\d+$/.test(port) || Number(port) > 65_535)) throw new UsageError(`--port must be a port number from 0 to 65535, got "${port}"`, "start");
  if (host === "") throw new UsageError("--host is empty", "start");
  return { ...(port === undefined ? {} : { port: Number(port) }), ...(host === undefined ? {} : { host }) };
}

/** The config's server options, with --port and --host over them; checked before the database is opened. */
function serveOptions(config: LoadedConfig, listen: { port?: number; host?: string }): ServeOptions {
  const options = { ...config.server, ...listen } as ServeOptions;
  if (!options.token && !process.env[TOKEN_VARIABLE]) {
    throw new UsageError(`the admin server needs a token: set ${TOKEN_VARIABLE} (16 characters or more) or server.token in the config, or pass --no-server`, "start");
  }
  return options;
}

async function startServer(tw: Tickwork, config: LoadedConfig, options: ServeOptions): Promise<Serving> {
  // Loaded here, so that the one-shot commands never load the server and its dashboard.
  const { serve } = await import("../../server/index.js");
  try {
    return await serve(tw, options);
  } catch (error) {
    if (isInputError(error)) throw new ConfigError(config.file, `server: ${error.message.replace(/^(adminApp|serve): /, "")}`);
    throw error;
  }
}

/** Resolves on the first SIGTERM or SIGINT; from then on, another one ends the process at once. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals) => {
      for (const s of SIGNALS) process.off(s, first);
      for (const s of SIGNALS) {
        process.once(s, () => {
          note(`tickwork: ${s} again: exiting without waiting for running jobs`);
          process.exit(EXIT_FAILURE);
        });
      }
      resolve(signal);
    };
    for (const s of SIGNALS) process.on(s, first);
  });
}
