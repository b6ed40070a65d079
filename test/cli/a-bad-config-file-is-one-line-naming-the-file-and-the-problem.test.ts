import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli, workdir } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

interface Case {
  name: string;
  file: string;
  /** The file's text; none: the file does not exist. */
  text?: string;
  code: 1 | 2;
  /** What follows "tickwork: config <file>: ". */
  problem: string | RegExp;
}

const CASES: Case[] = [
  { name: "a file that does not exist", file: "nope.config.ts", code: 2, problem: "no such file" },
  { name: "a file that is not a module", file: "tickwork.yaml", text: "queues: {}\n", code: 2, problem: 'expected a .ts, .mts, .cts, .js, .mjs or .cjs module, got ".yaml"' },
  { name: "a TypeScript syntax error", file: "syntax.config.ts", text: "export default {\n  queues: { a: { concurrency: 2 }\n};\n", code: 2, problem: 'syntax error at syntax.config.ts:3:1: Expected "}" but found ";"' },
  { name: "a JavaScript syntax error", file: "broken.config.js", text: "export default {\n  tasks: {,\n};\n", code: 2, problem: "syntax error at broken.config.js:2: Unexpected token ','" },
  { name: "an import that cannot be found", file: "imports.config.ts", text: 'import "./missing-module.js";\nexport default {};\n', code: 2, problem: /^failed to load: Error: Cannot find module '.*missing-module\.js'/ },
  { name: "a module that throws while loading", file: "throws.config.ts", text: 'throw new Error("config exploded");\n', code: 2, problem: "failed to load: Error: config exploded" },
  { name: "no default export", file: "named.config.ts", text: "export const queues = {};\n", code: 2, problem: "has no default export: `export default defineConfig({ queues, tasks, setup })` or a function `(tw, context) => ...`" },
  { name: "a default export of the wrong kind", file: "number.config.ts", text: "export default 42;\n", code: 2, problem: "the default export must be defineConfig({ queues, tasks, engine, server, setup }) or a function (tw, context) => ..., got 42" },
  { name: "an unknown key", file: "typo.config.ts", text: "export default { queus: {} };\n", code: 2, problem: 'unknown key "queus" in the default export (expected queues, tasks, engine, server, setup)' },
  { name: "queues that are not an object", file: "list.config.ts", text: 'export default { queues: ["emails"] };\n', code: 2, problem: 'queues must be an object of queue name to options, got ["emails"]' },
  { name: "queue options that are not an object", file: "three.config.ts", text: "export default { queues: { emails: 3 } };\n", code: 2, problem: "queues.emails must be an object of queue options, got 3" },
  { name: "bad queue options", file: "concurrency.config.ts", text: "export default { queues: { emails: { concurrency: 0 } } };\n", code: 2, problem: /^queue "emails": concurrency: .*>=1.* \(got 0\)$/ },
  { name: "an unknown queue option", file: "retries.config.ts", text: "export default { queues: { emails: { retries: 3 } } };\n", code: 2, problem: /^queue "emails": .*"retries"/ },
  { name: "a bad queue name", file: "qname.config.ts", text: 'export default { queues: { "bad name": {} } };\n', code: 2, problem: /^queue name "bad name" is invalid/ },
  { name: "a task with both every and cron", file: "cadence.config.ts", text: 'export default { tasks: { t: { every: "5m", cron: "* * * * *", run() {} } } };\n', code: 2, problem: 'task "t": give exactly one of every or cron' },
  { name: "an engine option the command line owns", file: "store.config.ts", text: 'export default { engine: { store: "x" } };\n', code: 2, problem: "engine.store cannot be set in a config: --db chooses the store" },
  { name: "a bad engine option", file: "engine.config.ts", text: 'export default { engine: { pollInterval: "fast" } };\n', code: 2, problem: /^engine: pollInterval: invalid duration "fast"/ },
  { name: "setup that is not a function", file: "setup.config.ts", text: 'export default { setup: "yes" };\n', code: 2, problem: 'setup must be a function (tw, context) => teardown?, got "yes"' },
  { name: "setup that declares a bad queue", file: "setupqueue.config.ts", text: 'export default (tw) => { tw.queue("x", { concurrency: -1 }); };\n', code: 2, problem: /^setup: queue "x": concurrency: / },
  { name: "setup that declares a queue twice", file: "twice.config.ts", text: 'export default { queues: { emails: {} }, setup(tw) { tw.queue("emails", { concurrency: 2 }); } };\n', code: 2, problem: 'setup: queue "emails" is already declared: keep the Queue its declaration returned, or get it again with tw.queue("emails") and no options' },
  { name: "setup that returns something else than a teardown", file: "returns.config.ts", text: "export default { setup: () => 5 };\n", code: 2, problem: "setup returned 5: return nothing, or a teardown function" },
  { name: "setup that throws (a failure at run time)", file: "down.config.ts", text: 'export default { setup() { throw new Error("the app database is down"); } };\n', code: 1, problem: "setup failed: the app database is down" },
];

describe("a bad config file", () => {
  const work = workdir();
  const db = join(work.dir, "tickwork.db");
  beforeAll(async () => {
    for (const c of CASES) if (c.text !== undefined) work.write(c.file, c.text);
    expect((await runCli(["migrate", "--db", db], { cwd: work.dir })).code).toBe(0);
  });
  afterAll(() => work.cleanup());

  it.each(CASES)("$name: one line naming $file, exit $code", async ({ file, code, problem }) => {
    const result = await runCli(["status", "--db", db, "--config", file], { cwd: work.dir });
    expect(result.stdout).toBe("");
    expect(result.stderr.endsWith("\n") && result.stderr.split("\n").length).toBe(2);
    const prefix = `tickwork: config ${file}: `;
    expect(result.stderr.startsWith(prefix), result.stderr).toBe(true);
    const said = result.stderr.slice(prefix.length, -1);
    if (typeof problem === "string") expect(said).toBe(problem);
    else expect(said).toMatch(problem);
    expect(result.code).toBe(code);
  });

  it("is refused by start before any database is created", async () => {
    const fresh = join(work.dir, "fresh.db");
    const result = await runCli(["start", "--no-server", "--db", fresh, "--config", "typo.config.ts"], { cwd: work.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('tickwork: config typo.config.ts: unknown key "queus" in the default export (expected queues, tasks, engine, server, setup)\n');
    expect(existsSync(fresh)).toBe(false);
  });

  it("is named by its absolute path when it lies outside the working directory", async () => {
    const outside = workdir();
    try {
      const path = outside.write("tickwork.config.ts", "export default 42;\n");
      const result = await runCli(["status", "--db", db, "--config", path], { cwd: work.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^tickwork: config ${path.replaceAll("/", "\\/")}: the default export must be`));
    } finally {
      outside.cleanup();
    }
  });

  it("is found as ./tickwork.config.ts without --config, and TICKWORK_CONFIG names another", async () => {
    const own = workdir();
    try {
      own.write("tickwork.config.ts", "export default { queus: {} };\n");
      own.write("other.config.ts", "export default 7;\n");
      const found = await runCli(["status", "--db", db], { cwd: own.dir });
      expect(found.stderr).toMatch(/^tickwork: config tickwork\.config\.ts: unknown key "queus"/);
      const named = await runCli(["status", "--db", db], { cwd: own.dir, env: { TICKWORK_CONFIG: "other.config.ts" } });
      expect(named.stderr).toMatch(/^tickwork: config other\.config\.ts: the default export must be .*, got 7\n$/);
    } finally {
      own.cleanup();
    }
  });
});
