import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Miniflare, type WorkerOptions } from "miniflare";
import { bundleWorker } from "../../test/cloudflare/support/workerd.js";

/**
 * Runs this folder's Worker in workerd (miniflare) as wrangler.jsonc configures it, so the tests
 * exercise the configuration a deploy uses: its Durable Objects (on SQLite), KV namespaces, D1
 * databases and vars. The `LOGS` service is a local worker-logs (test/cloudflare/fixtures).
 */

interface WranglerConfig {
  main: string;
  compatibility_date: string;
  durable_objects: { bindings: { name: string; class_name: string }[] };
  migrations: { new_sqlite_classes?: string[] }[];
  kv_namespaces?: { binding: string }[];
  d1_databases?: { binding: string }[];
  services?: { binding: string; service: string; entrypoint?: string }[];
  vars?: Record<string, string>;
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** wrangler.jsonc, parsed. */
export function wranglerConfig(): WranglerConfig {
  return JSON.parse(withoutComments(readFileSync(here("wrangler.jsonc"), "utf8"))) as WranglerConfig;
}

/** JSONC's `//` comments dropped, outside strings (the URLs in it hold `//`). */
function withoutComments(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === "\\") out += text[++i] ?? "";
      else if (ch === '"') inString = false;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else {
      inString = ch === '"';
      out += ch;
    }
  }
  return out;
}

export interface ExampleWorker {
  mf: Miniflare;
  /** A request to the Worker, as from the internet. */
  fetch(path: string, init?: { method?: string; body?: unknown; token?: string }): Promise<{ status: number; body: unknown }>;
  /** What the local worker-logs received for `appId`. */
  logs(appId: string): Promise<{ level: string; message: string; context: Record<string, unknown> }[]>;
  dispose(): Promise<void>;
}

export async function startExampleWorker(vars: Record<string, string>): Promise<ExampleWorker> {
  const config = wranglerConfig();
  const sqlite = new Set(config.migrations.flatMap((m) => m.new_sqlite_classes ?? []));
  const [script, logsScript] = await Promise.all([bundleWorker(here(config.main)), bundleWorker(here("../../test/cloudflare/fixtures/logs-service.ts"))]);
  const services = config.services ?? [];
  const app: WorkerOptions = {
    name: "app",
    modules: true,
    script,
    compatibilityDate: config.compatibility_date,
    durableObjects: Object.fromEntries(config.durable_objects.bindings.map((b) => [b.name, { className: b.class_name, useSQLite: sqlite.has(b.class_name) }])),
    kvNamespaces: (config.kv_namespaces ?? []).map((k) => k.binding),
    d1Databases: (config.d1_databases ?? []).map((d) => d.binding),
    serviceBindings: Object.fromEntries(services.map((s) => [s.binding, { name: s.service, ...(s.entrypoint ? { entrypoint: s.entrypoint } : {}) }])),
    bindings: { ...config.vars, ...vars },
  };
  const logWorkers: WorkerOptions[] = [...new Set(services.map((s) => s.service))].map((name) => ({ name, modules: true, script: logsScript, compatibilityDate: config.compatibility_date }));
  const mf = new Miniflare({ workers: [app, ...logWorkers] });
  await mf.ready;
  return {
    mf,
    async fetch(path, init = {}) {
      const response = await mf.dispatchFetch(`http://example.com${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), "content-type": "application/json" },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return { status: response.status, body: await response.json() };
    },
    async logs(appId) {
      const service = await mf.getWorker("worker-logs");
      const entries = (await (await service.fetch("http://logs/entries")).json()) as { appId: string; level: string; message: string; context: Record<string, unknown> }[];
      return entries.filter((e) => e.appId === appId);
    },
    dispose: () => mf.dispose(),
  };
}
