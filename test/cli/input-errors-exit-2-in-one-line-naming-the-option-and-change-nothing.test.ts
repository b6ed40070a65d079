import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  try {
    return await fn(tw);
  } finally {
    await tw.stop();
  }
}

/**
 * A value past what the store holds (an id above 2^63-1, a time after 9999, a key longer than a
 * key can be) is an input error: exit 2 and one line naming the option and the bound, before the
 * store is written; on PostgreSQL it used to be exit 1 with the server's own message (22003).
 */
describe.each(cliDatabases)("tickwork input errors on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  let pending = "";
  const run = (...args: string[]) => runCli([...args, ...database.args], { cwd: work.dir });

  beforeAll(async () => {
    database = make(work.dir);
    expect((await run("migrate")).code).toBe(0);
    pending = await withEngine(database, async (tw) => (await tw.queue("emails").enqueue({ to: "ada" }, { delay: "1h" })).id);
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it.each([
    [["jobs", "retry", "9223372036854775808"], /^tickwork jobs retry: job ids: expected job ids \(integers from 1 to 9223372036854775807\), got "9223372036854775808" \(see: tickwork jobs retry --help\)\n$/],
    [["jobs", "cancel", "PENDING", "99999999999999999999"], /^tickwork jobs cancel: job ids: expected job ids \(integers from 1 to 9223372036854775807\), got "99999999999999999999" \(see: tickwork jobs cancel --help\)\n$/],
    [["jobs", "list", "--before", "9223372036854775808"], /^tickwork jobs list: --before: expected job ids \(integers from 1 to 9223372036854775807\), got "9223372036854775808" \(see: tickwork jobs list --help\)\n$/],
    [["jobs", "list", "--key", "k".repeat(256)], /^tickwork jobs list: --key must be a string of 1 to 255 characters, got a string of 256 characters starting "k+" \(see: tickwork jobs list --help\)\n$/],
    [["tasks", "pause", "--until", "99999999999999999999"], /^tickwork tasks pause: --until must be a time from 1970 to 9999 \(epoch milliseconds 0 to 253402300799999\), got 99999999999999999999 \(see: tickwork tasks pause --help\)\n$/],
    [["tasks", "pause", "--until", "253402300800000"], /^tickwork tasks pause: --until must be a time from 1970 to 9999 .*, got 253402300800000 \(see/],
    [["tasks", "pause", "--until", "+275760-09-13T00:00:00Z"], /^tickwork tasks pause: --until must be a time from 1970 to 9999 .*, got \+275760-09-13T00:00:00Z \(see/],
    [["tasks", "pause", "--for", "36501d"], /^tickwork tasks pause: --for 36501d is not a duration/],
    [["queues", "pause", "emails", "--group", "g".repeat(256)], /^tickwork queues pause: --group must be a string of 1 to 255 characters, got a string of 256 characters starting "g+" \(see: tickwork queues pause --help\)\n$/],
  ])("tickwork %j exits 2 with one line naming the option", async (args, message) => {
    const result = await run(...args.map((a) => (a === "PENDING" ? pending : a)));
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
    expect(result.code).toBe(2);
  });

  it("nothing was changed: the pending job is still pending, no task or queue is paused", async () => {
    await withEngine(database, async (tw) => {
      expect((await tw.jobs.get(pending))?.status).toBe("pending");
      expect((await tw.scheduler.status()).pausedUntil).toBeNull();
      tw.queue("emails");
      expect((await tw.queues.status("emails"))[0]).toMatchObject({ paused: false, pausedGroups: [] });
    });
  });

  it("the largest id is well-formed: a job that does not exist is reported by id and exits 1, after the others ran", async () => {
    const result = await run("jobs", "cancel", pending, "9223372036854775807");
    expect(result.stdout).toMatch(new RegExp(`^job ${pending} \\(emails\\) cancelled\\n$`));
    expect(result.stderr).toMatch(/^tickwork: job 9223372036854775807 does not exist/);
    expect(result.code).toBe(1);
  });
});

describe("a store failure keeps exit 1; a schema PostgreSQL would split or cut is exit 2", () => {
  const work = workdir();
  afterAll(() => work.cleanup());
  const url = "postgres://postgres@127.0.0.1:5432/test";

  it.each([
    ["a b", /^tickwork status: --schema "a b" contains whitespace \(see: tickwork status --help\)\n$/],
    ["s".repeat(64), /^tickwork status: --schema must be at most 63 bytes \(PostgreSQL would cut it\), got 64 \(see: tickwork status --help\)\n$/],
    ["é".repeat(32), /^tickwork status: --schema must be at most 63 bytes .*, got 64 /],
  ])("--schema %j exits 2 in one line (it was exit 1 with the server's message)", async (schema, message) => {
    const result = await runCli(["status", "--db", url, "--schema", schema], { cwd: work.dir });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
  });

  it("an unreachable PostgreSQL server is exit 1, in one line", async () => {
    const result = await runCli(["status", "--db", "postgres://postgres@127.0.0.1:1/test"], { cwd: work.dir });
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});
