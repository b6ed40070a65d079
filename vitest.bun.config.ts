import { defineConfig } from "vitest/config";
import { RUNTIME_CONTRACT_SLICE } from "./test/support/runtime-slice.js";
import { RUNTIME_TEST_OPTIONS } from "./test/support/vitest-options.js";

/**
 * The Bun run (.ci/bun-deno.sh): vitest started by Bun, so its worker processes are Bun too
 * (test/runtime/bun asserts it). The slice of the contract suites that each runtime repeats
 * (test/support/runtime-slice.ts) runs on SQLite (bun:sqlite, what sqlite() opens under Bun) and
 * PostgreSQL; test/runtime drives a started engine on real timers, LISTEN/NOTIFY and SIGTERM;
 * test/runtime/bun serves the admin app on Bun.serve.
 */
export default defineConfig({
  test: {
    include: [
      ...RUNTIME_CONTRACT_SLICE,
      "test/runtime/*.test.ts",
      "test/runtime/bun/**/*.bun-test.ts",
    ],
    ...RUNTIME_TEST_OPTIONS,
    // Bun's module namespace objects answer `"__esModule" in ns` with true, so vitest's CommonJS
    // interop would take an ES module's default export for the module: `import { z } from "zod"`
    // would be undefined. Bun imports CommonJS with named exports by itself, so no interop is needed.
    deps: { interopDefault: false },
  },
});
