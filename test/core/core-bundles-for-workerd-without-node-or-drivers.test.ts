import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildFailure, type Plugin } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Database drivers and their native helpers: they belong in stores, never in the core. */
const DRIVER = /^(pg|pg-[^/]+|pgpass|better-sqlite3|bindings|file-uri-to-path)(\/|$)/;
const DRIVER_INPUT = /(^|\/)node_modules\/(pg|pg-[^/]+|pgpass|better-sqlite3|bindings|file-uri-to-path)\//;

/**
 * Bundles `entryPoints` as workerd would take them (platform neutral, ESM, nothing external) and
 * returns every reason the bundle could not run there: an import of a Node built-in (`node:*` or
 * bare, like `fs` or `events`), a database driver, or anything that does not resolve at all.
 */
async function bundleForWorkerd(entryPoints: string[]): Promise<{ violations: string[]; inputs: string[] }> {
  const violations: string[] = [];
  let inputs: string[] = [];
  const where = (importer: string) => (importer ? relative(ROOT, importer) : "(entry)");
  const guard: Plugin = {
    name: "workerd-guard",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.path.startsWith("node:") || isBuiltin(args.path)) {
          violations.push(`${where(args.importer)} imports the Node built-in "${args.path}"`);
          return { path: args.path, external: true };
        }
        if (DRIVER.test(args.path)) violations.push(`${where(args.importer)} imports the database driver "${args.path}"`);
        return undefined;
      });
    },
  };
  try {
    const result = await build({
      entryPoints,
      absWorkingDir: ROOT,
      bundle: true,
      platform: "neutral",
      format: "esm",
      write: false,
      outdir: join(tmpdir(), "tickwork-workerd-bundle"),
      mainFields: ["module", "main"],
      metafile: true,
      logLevel: "silent",
      plugins: [guard],
    });
    inputs = Object.keys(result.metafile.inputs);
    for (const [input, info] of Object.entries(result.metafile.inputs)) {
      if (DRIVER_INPUT.test(input)) violations.push(`the bundle contains the driver file ${input}`);
      for (const imported of info.imports) {
        if (imported.path.startsWith("node:") || isBuiltin(imported.path)) violations.push(`${input} imports "${imported.path}"`);
      }
    }
    for (const [output, info] of Object.entries(result.metafile.outputs)) {
      for (const imported of info.imports) violations.push(`${relative(ROOT, output)} still imports "${imported.path}" at run time`);
    }
  } catch (error) {
    const failure = error as BuildFailure;
    if (!Array.isArray(failure.errors)) throw error;
    for (const e of failure.errors) violations.push(`build error: ${e.text}${e.location ? ` (${e.location.file}:${e.location.line})` : ""}`);
  }
  return { violations: [...new Set(violations)], inputs };
}

async function workerdViolations(entryPoints: string[]): Promise<string[]> {
  return (await bundleForWorkerd(entryPoints)).violations;
}

const scratch = mkdtempSync(join(tmpdir(), "tickwork-workerd-check-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tempEntry(name: string, source: string): string {
  const path = join(scratch, name);
  writeFileSync(path, source);
  return path;
}

describe("the core runs in workerd", () => {
  it("bundles src/index.ts and src/testing/index.ts without any Node built-in or database driver", async () => {
    const { violations, inputs } = await bundleForWorkerd([join(ROOT, "src/index.ts"), join(ROOT, "src/testing/index.ts")]);
    expect(violations).toEqual([]);
    // The bundle really holds the core, so an empty list means something.
    expect(inputs).toEqual(expect.arrayContaining(["src/tickwork.ts", "src/queue/worker/worker.ts", "src/testing/fake-clock.ts"]));
  });

  describe("the check has teeth", () => {
    it("flags an entry that imports node:fs", async () => {
      const entry = tempEntry("imports-node-fs.ts", 'import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n');
      const violations = await workerdViolations([entry]);
      expect(violations).toContainEqual(expect.stringContaining('imports the Node built-in "node:fs"'));
    });

    it("flags bare built-in names such as events and crypto", async () => {
      const entry = tempEntry("imports-bare.ts", 'import { EventEmitter } from "events";\nimport { createHash } from "crypto";\nexport const x = [EventEmitter, createHash];\n');
      const violations = await workerdViolations([entry]);
      expect(violations).toContainEqual(expect.stringContaining('imports the Node built-in "events"'));
      expect(violations).toContainEqual(expect.stringContaining('imports the Node built-in "crypto"'));
    });

    it("flags the SQLite and PostgreSQL stores, which load their drivers through Node's require", async () => {
      // Both load their driver as an optional peer at run time (src/store/peer.ts), never by a static import.
      const peerLoader = 'src/store/peer.ts imports the Node built-in "node:module"';
      const sqliteEntry = tempEntry("imports-sqlite-store.ts", `export { sqlite } from ${JSON.stringify(join(ROOT, "src/store/sqlite.ts"))};\n`);
      expect(await workerdViolations([sqliteEntry])).toContainEqual(peerLoader);
      const postgresEntry = tempEntry("imports-postgres-store.ts", `export { postgres } from ${JSON.stringify(join(ROOT, "src/store/postgres.ts"))};\n`);
      expect(await workerdViolations([postgresEntry])).toContainEqual(peerLoader);
    });

    it("flags an import that does not resolve at all", async () => {
      const entry = tempEntry("imports-missing.ts", 'export { x } from "./no-such-module.js";\n');
      expect(await workerdViolations([entry])).toContainEqual(expect.stringMatching(/^build error: Could not resolve "\.\/no-such-module\.js"/));
    });
  });
});
