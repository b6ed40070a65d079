import { expect, it } from "vitest";
import { sqlite } from "../../../src/store/sqlite.js";
import { denoRuntime } from "./deno-runtime.js";

// Every file of the Deno run executes in the same pool of Deno processes as this one, so this proves
// that the contract suites of vitest.deno.config.ts ran in Deno, on node:sqlite for their SQLite cases.
it("this test process is Deno, and sqlite() opens Deno's node:sqlite in it", async () => {
  const deno = denoRuntime();
  expect(process.versions.deno).toBe(deno.version.deno);
  const manifest = JSON.parse(await deno.readTextFile(new URL("../../../package.json", import.meta.url))) as { name: string };
  expect(manifest.name).toBe("tickwork");
  const store = sqlite(":memory:");
  try {
    expect(store.name).toBe("sqlite(:memory:, node:sqlite)");
  } finally {
    await store.close();
  }
});
