import { defineConfig } from "vitest/config";
import { RUNTIME_CONTRACT_SLICE } from "./test/support/runtime-slice.js";
import { RUNTIME_TEST_OPTIONS } from "./test/support/vitest-options.js";

/**
 * The Deno run (.ci/bun-deno.sh): vitest started by Deno, so its worker processes are Deno too
 * (test/runtime/deno asserts it). The slice of the contract suites that each runtime repeats
 * (test/support/runtime-slice.ts) runs on SQLite (Deno's node:sqlite, what sqlite() opens there) and
 * PostgreSQL; test/runtime drives a started engine on real timers and LISTEN/NOTIFY and SIGTERM;
 * test/runtime/deno serves the admin app on Deno.serve.
 */
export default defineConfig({
  test: {
    include: [
      ...RUNTIME_CONTRACT_SLICE,
      "test/runtime/*.test.ts",
      "test/runtime/deno/**/*.deno-test.ts",
    ],
    // This test starts its worker with Node's `--import tsx`, which Deno does not take, and Deno's
    // node:child_process reports a child killed with SIGTERM as ended by the signal even when it
    // exits 0 by itself. test/runtime/deno has the same test with `deno run` and Deno.Command.
    exclude: ["test/runtime/sigterm-lets-the-running-job-finish-then-exits.test.ts"],
    ...RUNTIME_TEST_OPTIONS,
  },
});
