/**
 * The PostgreSQL server a chaos run uses: a cluster of its own (initdb into a temporary directory,
 * on a free port from 54329, never the machine's shared server), which the run may restart and stop
 * at will; or a server given by URL (`CHAOS_DATABASE_URL`), which the run only connects to.
 *
 * In its own cluster the workers connect as a plain role (`chaos`, owner of the `chaos` database)
 * and the controller as the superuser: when a scenario fills every connection slot, the superuser's
 * reserved slots still let the controller observe and act.
 */
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

export interface PgServer {
  /** "own cluster (PostgreSQL 15.x, port 54329)" or "server at host:port/db". */
  readonly description: string;
  /** True when the run owns the cluster: it may restart and stop it. */
  readonly own: boolean;
  /** The URL workers, producers and the tables' owner use, named for the connecting process. */
  appUrl(applicationName: string): string;
  /** The controller's URL (superuser in the own cluster). */
  adminUrl(applicationName: string): string;
  /** `pg_ctl restart -m fast`; resolves once the server accepts connections again. */
  restartFast(): Promise<void>;
  /** `pg_ctl stop -m immediate`: every backend dies at once, no checkpoint (crash recovery at start). */
  stopImmediate(): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes the own cluster; nothing for a server given by URL. */
  close(): Promise<void>;
}

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

export function urlServer(url: string): PgServer {
  const u = new URL(url);
  const notOwn = async () => {
    throw new Error("a server given by URL is never restarted or stopped by the chaos run");
  };
  return {
    description: `server at ${u.host}${u.pathname} (CHAOS_DATABASE_URL)`,
    own: false,
    appUrl: (name) => withParams(url, { application_name: name }),
    adminUrl: (name) => withParams(url, { application_name: name }),
    restartFast: notOwn,
    stopImmediate: notOwn,
    start: notOwn,
    close: async () => {},
  };
}

/** The newest installed PostgreSQL's bin directory (Debian layout), or CHAOS_PG_BIN. */
function binDir(): string {
  const fromEnv = process.env.CHAOS_PG_BIN;
  if (fromEnv) return fromEnv;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0]) return join(root, versions[0], "bin");
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("no PostgreSQL binaries found (looked in /usr/lib/postgresql/*/bin and pg_config); set CHAOS_PG_BIN or CHAOS_DATABASE_URL");
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function freePort(from: number): Promise<number> {
  for (let port = from; port < from + 100; port++) if (await portFree(port)) return port;
  throw new Error(`no free port in ${from}-${from + 99}`);
}

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
function asOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

function ownerIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

export async function ownCluster(firstPort: number, log: (line: string) => void): Promise<PgServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "tw-chaos-pg-"));
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  const owner = ownerIds();
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chmodSync(dir, 0o700);
  }
  const pgctl = async (args: string[]) => {
    const [cmd, full] = asOwner(join(bin, "pg_ctl"), ["-D", data, "-l", logFile, ...args]);
    try {
      await run(cmd, full, { timeout: 120_000 });
    } catch (error) {
      const tail = existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").slice(-15).join("\n") : "";
      throw new Error(`pg_ctl ${args.join(" ")} failed: ${String(error)}\nserver log:\n${tail}`);
    }
  };
  const [initdb, initArgs] = asOwner(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]);
  await run(initdb, initArgs, { timeout: 120_000 });
  const port = await freePort(firstPort);
  // A small max_connections so that the pool scenario can fill the server; fsync and
  // synchronous_commit stay on, as in production, so an immediate stop loses nothing committed.
  const serverOptions = ["-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=60", "-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "shared_buffers=32MB"].join(" ");
  const start = () => pgctl(["-w", "-t", "60", "-o", serverOptions, "start"]);
  await start();
  const version = execFileSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" }).trim().replace(/^postgres \(PostgreSQL\) /, "");

  const admin = (name: string) => `postgres://postgres@127.0.0.1:${port}/chaos?application_name=${encodeURIComponent(name)}`;
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE ROLE chaos LOGIN`);
    await client.query(`CREATE DATABASE chaos OWNER chaos`);
  } finally {
    await client.end();
  }

  let closed = false;
  // If the run ends without closing the cluster (an exception, Ctrl-C), it must not stay behind.
  const onExit = () => {
    if (closed) return;
    try {
      const [cmd, full] = asOwner(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
      execFileSync(cmd, full, { stdio: "ignore", timeout: 30_000 });
    } catch {
      // already down
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", onExit);
  log(`own cluster: PostgreSQL ${version} in ${dir}, port ${port}`);

  return {
    description: `own cluster (PostgreSQL ${version}, 127.0.0.1:${port}, max_connections 60, fsync on)`,
    own: true,
    appUrl: (name) => `postgres://chaos@127.0.0.1:${port}/chaos?application_name=${encodeURIComponent(name)}`,
    adminUrl: admin,
    restartFast: () => pgctl(["-w", "-t", "60", "-m", "fast", "restart"]),
    stopImmediate: () => pgctl(["-w", "-t", "60", "-m", "immediate", "stop"]),
    start,
    async close() {
      if (closed) return;
      await pgctl(["-w", "-t", "60", "-m", "fast", "stop"]).catch(() => pgctl(["-m", "immediate", "stop"]).catch(() => {}));
      closed = true;
      process.off("exit", onExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
