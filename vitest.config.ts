import { configDefaults, defineConfig } from "vitest/config";
import { TEST_OPTIONS } from "./test/support/vitest-options.js";

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
    ...TEST_OPTIONS,
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
