import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StoreSetupError } from "../../src/core/errors.js";
import { sqlite } from "../../src/store/sqlite.js";

describe("an SQLite path that cannot be opened is a StoreSetupError naming the path and the remedy", () => {
  const dir = mkdtempSync(join(tmpdir(), "tw-setup-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["a directory that does not exist", () => join(dir, "missing", "app.db"), /^cannot open the SQLite database \S+missing\/app\.db: .*: create its directory first$/],
    ["a file that is not an SQLite database", () => (writeFileSync(join(dir, "notes.txt"), "not a database, just text ".repeat(40)), join(dir, "notes.txt")), /^cannot open the SQLite database \S+notes\.txt: file is not a database: give tickwork a file of its own, or a new path$/],
    ["a directory given as the file", () => dir, /^cannot open the SQLite database \S+: .*: check that the path is a file \(or a place for one\) this process may read and write$/],
  ] as const)("%s", (_, path, message) => {
    let error: unknown;
    try {
      sqlite(path()).close();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreSetupError);
    expect(error).toMatchObject({ code: "TW_STORE_SETUP", message: expect.stringMatching(message) });
  });
});
