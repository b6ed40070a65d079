import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { extname, isAbsolute, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe } from "../core/errors.js";
import type { ConfigSetup } from "./define-config.js";
import { ConfigError } from "./errors.js";

/** Looked for in the working directory, in this order, when neither --config nor TICKWORK_CONFIG is given. */
export const DEFAULT_CONFIG_FILES = ["tickwork.config.ts", "tickwork.config.mts", "tickwork.config.js", "tickwork.config.mjs"];

const TYPESCRIPT = new Set([".ts", ".mts", ".cts"]);
const JAVASCRIPT = new Set([".js", ".mjs", ".cjs"]);
const KEYS = ["queues", "tasks", "engine", "server", "setup"];
/** Engine options the command line owns. */
const ENGINE_OWNED: Record<string, string> = {
  store: "--db chooses the store",
  clock: "the command line runs on the system clock",
  migrate: "`tickwork start` migrates, and `tickwork migrate` does so on its own",
  handleSignals: "`tickwork start` handles SIGTERM and SIGINT itself",
};

/** A config file, loaded and checked for shape; its options are checked when they are declared. */
export interface LoadedConfig {
  /** The file as messages name it: relative to the working directory when inside it. */
  file: string;
  queues: [name: string, options: object][];
  tasks: [name: string, options: object][];
  engine: Record<string, unknown>;
  server: Record<string, unknown>;
  setup: ConfigSetup | undefined;
}

/** The config file to load: `--config`, else TICKWORK_CONFIG, else the first default file present. */
export function findConfig(given: string | undefined, cwd: string): string | undefined {
  if (given !== undefined) return given;
  return DEFAULT_CONFIG_FILES.find((name) => existsSync(resolve(cwd, name)));
}

export async function loadConfig(path: string, cwd: string): Promise<LoadedConfig> {
  const absolute = resolve(cwd, path);
  const file = shown(absolute, cwd);
  const ext = extname(absolute);
  if (!TYPESCRIPT.has(ext) && !JAVASCRIPT.has(ext)) throw new ConfigError(file, `expected a .ts, .mts, .cts, .js, .mjs or .cjs module, got "${ext || "no extension"}"`);
  if (!existsSync(absolute)) throw new ConfigError(file, "no such file");
  let namespace: Record<string, unknown>;
  try {
    namespace = TYPESCRIPT.has(ext) ? await importTypeScript(absolute, file) : ((await import(pathToFileURL(absolute).href)) as Record<string, unknown>);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(file, loadProblem(error, absolute, cwd));
  }
  return checkShape(file, exportsOf(namespace));
}

async function importTypeScript(absolute: string, file: string): Promise<Record<string, unknown>> {
  let tsx: { tsImport(specifier: string, parentURL: string): Promise<unknown> };
  try {
    tsx = await import("tsx/esm/api");
  } catch {
    throw new ConfigError(file, "a TypeScript config needs tsx: `npm install --save-dev tsx`, or write the config in JavaScript");
  }
  return (await tsx.tsImport(pathToFileURL(absolute).href, import.meta.url)) as Record<string, unknown>;
}

/** A TypeScript file in a package without `"type": "module"` is compiled to CommonJS: its exports sit one level down. */
function exportsOf(namespace: Record<string, unknown>): Record<string, unknown> {
  const inner = namespace.default as { __esModule?: unknown } | undefined;
  return inner && typeof inner === "object" && inner.__esModule === true ? (inner as Record<string, unknown>) : namespace;
}

function checkShape(file: string, exports: Record<string, unknown>): LoadedConfig {
  const fail = (problem: string): never => {
    throw new ConfigError(file, problem);
  };
  const value = exports.default;
  if (value === undefined) fail("has no default export: `export default defineConfig({ queues, tasks, setup })` or a function `(tw, context) => ...`");
  if (typeof value === "function") return { file, queues: [], tasks: [], engine: {}, server: {}, setup: value as ConfigSetup };
  if (!isPlainObject(value)) return fail(`the default export must be defineConfig({ queues, tasks, engine, server, setup }) or a function (tw, context) => ..., got ${describe(value)}`);
  const unknown = Object.keys(value).filter((key) => !KEYS.includes(key));
  if (unknown.length) fail(`unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")} in the default export (expected ${KEYS.join(", ")})`);
  const entries = (key: "queues" | "tasks", what: string): [string, object][] => {
    const map = value[key];
    if (map === undefined) return [];
    if (!isPlainObject(map)) return fail(`${key} must be an object of ${what} name to options, got ${describe(map)}`);
    return Object.entries(map).map(([name, options]) => (isPlainObject(options) ? [name, options] : fail(`${key}.${name} must be an object of ${what} options, got ${describe(options)}`)));
  };
  const queues = entries("queues", "queue");
  const tasks = entries("tasks", "task");
  const engine = value.engine ?? {};
  if (!isPlainObject(engine)) return fail(`engine must be an object of engine options, got ${describe(engine)}`);
  for (const key of Object.keys(engine)) if (key in ENGINE_OWNED) fail(`engine.${key} cannot be set in a config: ${ENGINE_OWNED[key]}`);
  const server = value.server ?? {};
  if (!isPlainObject(server)) return fail(`server must be an object of server options, got ${describe(server)}`);
  const setup = value.setup;
  if (setup !== undefined && typeof setup !== "function") fail(`setup must be a function (tw, context) => teardown?, got ${describe(setup)}`);
  return { file, queues, tasks, engine, server, setup: setup as ConfigSetup | undefined };
}

/** One line on why a module did not load; a syntax error names the place. */
function loadProblem(error: unknown, absolute: string, cwd: string): string {
  const err = error instanceof Error ? error : new Error(String(error));
  if (err.name === "TransformError") {
    // esbuild: "Transform failed with N error(s):\n/abs/file.ts:3:1: ERROR: Expected ..."
    const places = err.message.split("\n").slice(1).filter(Boolean).map((line) => line.replace(/^(.+?):(\d+:\d+): ERROR: /, (_, path: string, at: string) => `${shown(path, cwd)}:${at}: `));
    return `syntax error at ${places.join("; ")}`;
  }
  if (err instanceof SyntaxError) {
    // Node's ESM loader does not say where; `node --check` does, when the error is in this file.
    const line = syntaxErrorLine(absolute);
    return line === undefined ? `SyntaxError: ${err.message} (in a module it imports)` : `syntax error at ${shown(absolute, cwd)}:${line}: ${err.message}`;
  }
  return `failed to load: ${err.name}: ${err.message.split("\n")[0]}`;
}

function syntaxErrorLine(absolute: string): number | undefined {
  const check = spawnSync(process.execPath, ["--check", absolute], { encoding: "utf8", timeout: 10_000 });
  const first = check.stderr?.split("\n")[0] ?? "";
  const match = check.status !== 0 ? /:(\d+)$/.exec(first) : null;
  return match ? Number(match[1]) : undefined;
}

function shown(absolute: string, cwd: string): string {
  const rel = relative(cwd, absolute);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : absolute;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
