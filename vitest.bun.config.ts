import { defineConfig } from "vitest/config";

/**
 * The Bun run (.ci/bun-deno.sh): vitest started by Bun, so its worker processes are Bun too
 * (test/runtime/bun asserts it). The contract suites run on SQLite (bun:sqlite, what sqlite() opens
 * under Bun) and PostgreSQL; test/runtime drives a started engine on real timers, LISTEN/NOTIFY and
 * SIGTERM; test/runtime/bun serves the admin app on Bun.serve.
 */
export default defineConfig({
  test: {
    include: [
      "test/contract/{queue,schedule,delivery,fanout,idempotency}/**/*.test.ts",
      "test/runtime/*.test.ts",
      "test/runtime/bun/**/*.bun-test.ts",
    ],
    // The Durable Object store case needs workerd (the Node run's global setup starts it); every
    // other case of the same files runs here.
    testNamePattern: "^(?!.*durable-object)",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Bun's module namespace objects answer `"__esModule" in ns` with true, so vitest's CommonJS
    // interop would take an ES module's default export for the module: `import { z } from "zod"`
    // would be undefined. Bun imports CommonJS with named exports by itself, so no interop is needed.
    deps: { interopDefault: false },
  },
});
