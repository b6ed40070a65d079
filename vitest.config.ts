import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts", "chaos/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // PostgreSQL suites share one database; each suite uses its own schema, so files may run in parallel.
    pool: "forks",
    // One workerd for the run, started on first use, for the contract suites' Durable Object store.
    globalSetup: ["test/cloudflare/support/store-host-server.ts"],
  },
});
