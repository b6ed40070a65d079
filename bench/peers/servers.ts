/**
 * The servers every system shares in one run, and what the adapters need around them: unique
 * namespace names, dropping a schema, deleting a key prefix, the servers' versions and settings.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import pg from "pg";
import { DATABASE_URL } from "../fixtures.js";

export { DATABASE_URL };
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** BullMQ's connection options for the machine's Redis. */
export function redisConnection() {
  const url = new URL(REDIS_URL);
  // Workers need maxRetriesPerRequest: null (BullMQ refuses blocking connections otherwise).
  return { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
}

/** A schema or key prefix no other run (or earlier crashed run) uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Runs `fn` on a short-lived client of its own, so it never waits behind a busy pool. */
export async function withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function dropSchema(schema: string): Promise<void> {
  return withClient(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}

/** Deletes every key under `prefix:` (what BullMQ's obliterate leaves, such as the queue's meta and event stream). */
export async function deleteKeys(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== "0");
    return deleted;
  } finally {
    redis.disconnect();
  }
}

export async function postgresInfo(): Promise<{ version: string; settings: Record<string, string> }> {
  return withClient(async (client) => {
    const show = async (name: string) => (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    const settings: Record<string, string> = {};
    for (const name of ["synchronous_commit", "fsync", "shared_buffers", "max_connections"]) settings[name] = await show(name);
    return { version: await show("server_version"), settings };
  });
}

export async function redisInfo(): Promise<{ version: string; settings: Record<string, string> }> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    const info = await redis.info("server");
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
    const settings: Record<string, string> = {};
    for (const name of ["appendonly", "appendfsync", "save", "maxmemory-policy"]) {
      const [, value] = (await redis.config("GET", name)) as [string, string];
      settings[name] = value === "" ? '""' : value;
    }
    return { version, settings };
  } finally {
    redis.disconnect();
  }
}

/**
 * The installed version of a package (what actually ran, not the range in package.json): the peers
 * come from this directory's own package (bench/peers/node_modules), as Node resolves them from here.
 */
export function packageVersion(name: string): string {
  const path = new URL(name === "tickwork" ? "../../package.json" : `./node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
}

/**
 * Which tickwork ran: the commit, and whether src/ differed from it when the run loaded it
 * (several people change src/ while benchmarks run; a figure belongs to the code it measured).
 */
export function tickworkRevision(): string {
  const cwd = new URL("../..", import.meta.url).pathname;
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd, encoding: "utf8" }).trim() !== "";
    return `${commit}${dirty ? " with uncommitted changes in src/" : ""}`;
  } catch {
    return "unknown (not a git checkout)";
  }
}
