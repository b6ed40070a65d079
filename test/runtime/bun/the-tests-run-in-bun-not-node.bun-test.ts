import { expect, it } from "vitest";
import { sqlite } from "../../../src/store/sqlite.js";
import { bunRuntime } from "./bun-runtime.js";

// Every file of the Bun run executes in the same pool of Bun processes as this one, so this proves
// that the contract suites of vitest.bun.config.ts ran in Bun, on bun:sqlite for their SQLite cases.
it("this test process is Bun, and sqlite() opens bun:sqlite in it", async () => {
  const bun = bunRuntime();
  expect(process.versions.bun).toBe(bun.version);
  const store = sqlite(":memory:");
  try {
    expect(store.name).toBe("sqlite(:memory:, bun:sqlite)");
  } finally {
    await store.close();
  }
});
