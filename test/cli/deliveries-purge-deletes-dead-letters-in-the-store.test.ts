import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/** An engine of the test's own on the CLI's database, with a delivery whose receiver is down: one failure drops an item. */
async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork, daily: ReturnType<Tickwork["delivery"]>) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  const daily = tw.delivery("daily", { retry: () => null, send: () => Promise.reject(new Error("receiver down")) });
  try {
    return await fn(tw, daily);
  } finally {
    await tw.stop();
  }
}

describe.each(cliDatabases)("tickwork deliveries purge on $name (no config)", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  const run = (...args: string[]) => runCli([...args, ...database.args], { cwd: work.dir });
  const dropped = () => withEngine(database, async (_, daily) => (await daily.dropped()).map((d) => d.id).sort());
  let ids: string[] = [];

  beforeAll(async () => {
    database = make(work.dir);
    ids = await withEngine(database, async (tw, daily) => {
      await daily.emit(["a", "b", "c"].map((key) => ({ key, payload: { key } })));
      await tw.tick();
      return (await daily.dropped()).map((d) => d.id).sort();
    });
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it("--id deletes one dead letter; --older-than keeps the newer ones; --all deletes the rest", async () => {
    const one = await run("deliveries", "purge", "daily", "--id", ids[0]!, "--json");
    expect(one).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(one.stdout)).toEqual({ delivery: "daily", purged: [ids[0]] });
    expect(await dropped()).toEqual(ids.slice(1));

    const older = await run("deliveries", "purge", "daily", "--older-than", "1h");
    expect(older).toMatchObject({ code: 0, stdout: "0 dead letters of delivery daily deleted\n" });
    expect(await dropped()).toEqual(ids.slice(1));

    const all = await run("deliveries", "purge", "daily", "--all");
    expect(all).toMatchObject({ code: 0, stdout: "2 dead letters of delivery daily deleted\n" });
    expect(await dropped()).toEqual([]);
  });
});
