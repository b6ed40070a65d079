import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { Miniflare, type MiniflareOptions } from "miniflare";

export const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** workerd's compatibility date for every test worker (miniflare 4.20260420 supports up to it). */
export const COMPATIBILITY_DATE = "2026-04-01";

const bundles = new Map<string, Promise<string>>();

/** How wrangler bundles a Worker for workerd: one ESM file, platform neutral, the workerd conditions. */
export const WORKER_BUILD: BuildOptions = {
  absWorkingDir: ROOT,
  bundle: true,
  platform: "neutral",
  format: "esm",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
};

/**
 * Bundles a worker's entry module as wrangler would for workerd: one ESM file, platform neutral,
 * `cloudflare:*` left to the runtime. Once per entry (and alias) and test process. `alias` puts a
 * module in place of a package (a test's stand-in for a dependency).
 */
export function bundleWorker(entry: string, alias: Record<string, string> = {}): Promise<string> {
  const key = `${entry} ${JSON.stringify(alias)}`;
  let bundled = bundles.get(key);
  if (!bundled) {
    bundled = build({
      ...WORKER_BUILD,
      entryPoints: [entry],
      external: ["cloudflare:*"],
      alias,
      write: false,
      logLevel: "silent",
    }).then((result) => result.outputFiles[0]!.text);
    bundles.set(key, bundled);
  }
  return bundled;
}

/** The path of a file beside the caller, for `bundleWorker`. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** Starts workerd with `options` and waits until it serves. */
export async function startWorkerd(options: MiniflareOptions): Promise<Miniflare> {
  const mf = new Miniflare(options);
  await mf.ready;
  return mf;
}

/** A Durable Object's RPC methods as a caller outside it sees them: every result a promise. */
export type RpcStub<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** The stub of the object named `name` of the namespace bound as `binding`, called from Node through miniflare. */
export async function objectStub<T>(mf: Miniflare, binding: string, name: string, workerName?: string): Promise<RpcStub<T>> {
  const namespace = await mf.getDurableObjectNamespace(binding, workerName);
  return namespace.get(namespace.idFromName(name)) as unknown as RpcStub<T>;
}
