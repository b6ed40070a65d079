import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { REPO, runCli, workdir } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/**
 * An installed package has bin/ and dist/ but no src/: the bin must run dist/cli/main.js with plain
 * Node, no tsx registered. The package here is the CLI built into dist/ (esbuild standing in for
 * `npm run build`), with the repository's node_modules.
 */
describe("bin/tickwork.js in a package without sources", () => {
  const pkg = workdir();
  const work = workdir();

  beforeAll(async () => {
    mkdirSync(join(pkg.dir, "bin"));
    copyFileSync(join(REPO, "bin", "tickwork.js"), join(pkg.dir, "bin", "tickwork.js"));
    copyFileSync(join(REPO, "package.json"), join(pkg.dir, "package.json"));
    symlinkSync(join(REPO, "node_modules"), join(pkg.dir, "node_modules"));
    await build({ entryPoints: [join(REPO, "src", "cli", "main.ts")], outfile: join(pkg.dir, "dist", "cli", "main.js"), bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "silent" });
    writeFileSync(join(work.dir, "tickwork.config.js"), 'export default { tasks: { hello: { every: "1h", run: () => "hello from JavaScript" } } };\n');
    writeFileSync(join(work.dir, "typed.config.ts"), 'const greeting: string = "hello from TypeScript";\nexport default { tasks: { hello: { every: "1h", run: () => greeting } } };\n');
    writeFileSync(join(work.dir, "broken.config.js"), "export default {\n  tasks: {,\n};\n");
  });
  afterAll(() => {
    pkg.cleanup();
    work.cleanup();
  });

  const run = (...args: string[]) => runCli(args, { cwd: work.dir, bin: join(pkg.dir, "bin", "tickwork.js") });

  it("runs the build: version, migrate, and a JavaScript config loaded by plain import", async () => {
    expect((await run("--version")).stdout).toMatch(/^tickwork \d+\.\d+\.\d+\n$/);
    expect((await run("migrate")).code).toBe(0);
    const result = await run("tasks", "run", "hello");
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^hello: succeeded in \d+ ms: "hello from JavaScript"\n$/);
  });

  it("loads a TypeScript config through tsx from the user's node_modules", async () => {
    const result = await run("tasks", "run", "hello", "--config", "typed.config.ts");
    expect(result.stdout).toMatch(/^hello: succeeded in \d+ ms: "hello from TypeScript"\n$/);
  });

  it("names the line of a syntax error in a JavaScript config", async () => {
    const result = await run("status", "--config", "broken.config.js");
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("tickwork: config broken.config.js: syntax error at broken.config.js:2: Unexpected token ','\n");
  });
});
