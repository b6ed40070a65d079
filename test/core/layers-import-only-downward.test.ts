import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");

/** The modules: each stands on core/ (and its store seam on db/), none on another module. */
const MODULES = ["queue", "schedule", "delivery", "fanout", "idempotency", "cache", "http"] as const;
/** Above the modules: the engine (src/tickwork.ts), the store assemblies, runtimes, server, CLI. */
const ABOVE = ["tickwork", "store", "runtime", "server", "cli", "index", "hono", "testing"] as const;

/** Between: notify sends through the delivery module's outboxes, and only the engine and above use it. */
type Layer = "core" | "db" | "notify" | (typeof MODULES)[number] | (typeof ABOVE)[number];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "ui" ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function layerOf(file: string): Layer {
  const [top] = relative(SRC, file).split("/");
  return top!.replace(/\.tsx?$/, "") as Layer;
}

/** Every relative import of every source file, as (importing file, imported file), both relative to the root. */
function fileImports(): { file: string; target: string; spec: string }[] {
  const out: { file: string; target: string; spec: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = resolve(dirname(file), match[1]!);
      if (!target.startsWith(SRC)) continue;
      out.push({ file, target: target.replace(/\.js$/, ".ts"), spec: match[1]! });
    }
  }
  return out;
}

/** Every relative import across layers, as (importer layer, imported layer, where). */
function edges(): { from: Layer; to: Layer; where: string }[] {
  const out: { from: Layer; to: Layer; where: string }[] = [];
  for (const { file, target, spec } of fileImports()) {
    const from = layerOf(file);
    const to = layerOf(target);
    if (from !== to) out.push({ from, to, where: `${relative(ROOT, file)} -> ${spec}` });
  }
  return out;
}

/** The import circles among source files (type-only imports included), each as the files around it. */
function circles(): string[][] {
  const graph = new Map<string, string[]>();
  for (const { file, target } of fileImports()) graph.set(file, [...(graph.get(file) ?? []), target]);
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push(path.slice(path.indexOf(next)).map((f) => relative(ROOT, f)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe("the source tree's layers import only downward", () => {
  const all = edges();

  it("finds the imports it checks (the scan is not empty)", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((e) => e.from === "tickwork" && e.to === "queue")).toBe(true);
  });

  it("core/ imports no module, no store seam and nothing above", () => {
    expect(all.filter((e) => e.from === "core").map((e) => e.where)).toEqual([]);
  });

  it("db/ (the SQL seam) imports only core/", () => {
    expect(all.filter((e) => e.from === "db" && e.to !== "core").map((e) => e.where)).toEqual([]);
  });

  it("a module imports only core/ and db/: no other module, no store assembly, never the engine", () => {
    const modules = new Set<Layer>(MODULES);
    expect(all.filter((e) => modules.has(e.from) && e.to !== "core" && e.to !== "db").map((e) => e.where)).toEqual([]);
  });

  it("notify/ imports only core/, db/ and the delivery module it sends through; no module imports it", () => {
    expect(all.filter((e) => e.from === "notify" && !["core", "db", "delivery"].includes(e.to)).map((e) => e.where)).toEqual([]);
    const modules = new Set<Layer>(MODULES);
    expect(all.filter((e) => e.to === "notify" && modules.has(e.from)).map((e) => e.where)).toEqual([]);
  });

  it("no two source files import each other, directly or around a circle", () => {
    expect(circles()).toEqual([]);
  });

  it("the engine (src/tickwork.ts) is imported only from above it: entry points, runtimes, server, CLI", () => {
    const above = new Set<Layer>(ABOVE);
    expect(all.filter((e) => e.to === "tickwork" && !above.has(e.from)).map((e) => e.where)).toEqual([]);
  });
});
