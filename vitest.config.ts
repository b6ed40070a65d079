import { configDefaults, defineConfig } from "vitest/config";

/**
 * Three tiers, all run by `npm test` (one vitest run, one pool):
 *   fast       in-process suites: the contract suites on every store, core, property, HTTP, server (no browser), ...
 *   processes  real child processes and real workerd: CLI, crashes, multi-process races, examples, runtimes
 *   browser    the dashboard and job browser driven in Debian's Chromium
 * `npm test -- --project fast` (or processes, browser) runs one tier.
 */
const BROWSER = ["test/server/*-in-chromium.test.ts"];
const PROCESSES = [
  "test/cli/**/*.test.ts",
  "test/crash/**/*.test.ts",
  "test/multiprocess/**/*.test.ts",
  "test/runtime/**/*.test.ts",
  "test/examples-demo/**/*.test.ts",
  "test/cloudflare/**/*.test.ts",
  "examples/**/*.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits on a condition: 1 s (vitest's default) is a fixed delay in disguise on a loaded
    // machine, where a PostgreSQL round trip behind a busy claim can take longer. Tests that assert
    // something does NOT happen in time say so with their own bound.
    expect: { poll: { timeout: 10_000 } },
    // PostgreSQL suites share one database; each suite uses its own schema, so files may run in parallel.
    pool: "forks",
    // Vitest's default is one worker per core less one: a single worker on two cores, although most
    // files spend their time waiting on child processes, timers and the database. Four files at once
    // keep both cores busy; every test waits on conditions with deadlines, so it holds on a loaded host.
    maxWorkers: 4,
    // One workerd for the run, started on first use, for the contract suites' Durable Object store.
    globalSetup: ["test/cloudflare/support/store-host-server.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: ["test/**/*.test.ts", "chaos/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...PROCESSES, ...BROWSER],
        },
      },
      { extends: true, test: { name: "processes", include: PROCESSES } },
      { extends: true, test: { name: "browser", include: BROWSER } },
    ],
  },
});
