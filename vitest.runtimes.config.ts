import { defineConfig } from "vitest/config";
import { RUNTIME_CONTRACT_SLICE } from "./test/support/runtime-slice.js";
import { RUNTIME_TEST_OPTIONS } from "./test/support/vitest-options.js";

/**
 * The Node 22 and 24 runs (.ci/node-versions.sh): on these Nodes sqlite()'s "auto" driver opens
 * node:sqlite, so the slice of the contract suites runs the stores' statements through it; the SQLite
 * driver tests compare the drivers; test/runtime drives a started engine on real timers,
 * LISTEN/NOTIFY and SIGTERM. Vitest forks its workers with process.execPath, so every test runs on the
 * Node that runs vitest. Node 20 (`npm test`) runs everything else.
 */
export default defineConfig({
  test: {
    include: [...RUNTIME_CONTRACT_SLICE, "test/sqlite/drivers.test.ts", "test/runtime/*.test.ts"],
    ...RUNTIME_TEST_OPTIONS,
  },
});
