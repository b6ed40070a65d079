import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts", "chaos/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits on a condition: 1 s (vitest's default) is a fixed delay in disguise on a loaded
    // machine, where a PostgreSQL round trip behind a busy claim can take longer. Tests that assert
    // something does NOT happen in time say so with their own bound.
    expect: { poll: { timeout: 10_000 } },
    // PostgreSQL suites share one database; each suite uses its own schema, so files may run in parallel.
    pool: "forks",
    // One workerd for the run, started on first use, for the contract suites' Durable Object store.
    globalSetup: ["test/cloudflare/support/store-host-server.ts"],
  },
});
