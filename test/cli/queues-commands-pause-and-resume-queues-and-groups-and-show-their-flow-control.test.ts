import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import type { QueueFlowStatus } from "../../src/queue/controls.js";
import { FIXTURES, cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "flow.config.ts");

/** An engine of the test's own on the CLI's database, declaring the config's grouped queue. */
async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  tw.queue<{ tenant: string }>("work", { group: (p) => p.tenant });
  tw.queue("mail");
  try {
    return await fn(tw);
  } finally {
    await tw.stop();
  }
}

describe.each(cliDatabases)("tickwork queues on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  const run = (...args: string[]) => runCli([...args, ...database.args], { cwd: work.dir });
  const withConfig = (...args: string[]) => run(...args, "--config", CONFIG);
  const statusOf = async (queue: string) => withEngine(database, async (tw) => (await tw.queues.status(queue))[0]!);

  beforeAll(async () => {
    database = make(work.dir);
    expect((await run("migrate")).code).toBe(0);
    await withEngine(database, async (tw) => {
      await tw.enqueue("work", { tenant: "acme" });
      await tw.enqueue("work", { tenant: "acme" });
      await tw.enqueue("work", { tenant: "globex" });
    });
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it("queues pause pauses a queue for every process, says so once, and queues resume ends it; no config is needed for a queue with jobs", async () => {
    const paused = await run("queues", "pause", "work");
    expect(paused.stdout).toBe("queue work paused in every process (jobs already running go on)\n");
    // The engine's warning, as one text line on stderr (a JSON line with --json).
    expect(paused.stderr).toMatch(/^\S+Z warn {2}queue\.paused queue=work\n$/);
    expect(paused.code).toBe(0);
    expect(await statusOf("work")).toMatchObject({ paused: true, pausedGroups: [] });

    const again = await run("queues", "pause", "work", "--json");
    expect(JSON.parse(again.stdout)).toEqual({ queue: "work", group: null, changed: false });
    expect(again.code).toBe(0);

    const resumed = await run("queues", "resume", "work");
    expect(resumed.stdout).toBe("queue work resumed in every process\n");
    expect(resumed.code).toBe(0);
    expect((await run("queues", "resume", "work")).stdout).toBe("queue work was already running\n");
    expect(await statusOf("work")).toMatchObject({ paused: false });
  });

  it("queues pause --group pauses one group of a queue the config declares grouped, and queues resume --group ends it", async () => {
    const paused = await withConfig("queues", "pause", "work", "--group", "acme", "--json");
    expect(JSON.parse(paused.stdout)).toEqual({ queue: "work", group: "acme", changed: true });
    expect(await statusOf("work")).toMatchObject({ paused: false, pausedGroups: ["acme"] });

    const resumed = await withConfig("queues", "resume", "work", "--group", "acme");
    expect(resumed.stdout).toBe("group acme of queue work resumed in every process\n");
    expect(await statusOf("work")).toMatchObject({ pausedGroups: [] });

    // Without the config, the queue is known from its jobs only, as an ungrouped queue.
    const noConfig = await run("queues", "pause", "work", "--group", "acme");
    expect(noConfig.stderr).toBe(
      'tickwork queues pause: group needs a grouped queue: declare "work" with group, groupConcurrency or groupRateLimit (no config is loaded: pass --config with the one that declares it) (see: tickwork queues pause --help)\n',
    );
    expect(noConfig.code).toBe(2);
    expect(await statusOf("work")).toMatchObject({ pausedGroups: [] });
  });

  it("queues status shows each queue's state, running jobs against globalConcurrency, pending jobs, budgets and busiest groups", async () => {
    expect((await withConfig("queues", "pause", "work", "--group", "globex")).code).toBe(0);
    const result = await withConfig("queues", "status");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^QUEUE +STATE +RUNNING +PENDING +BUDGETS$/);
    expect(lines).toContainEqual(expect.stringMatching(/^mail +active +0 +0 +-$/));
    expect(lines).toContainEqual(expect.stringMatching(/^quotes +active +0 +0 +queue:quotes: 1\/1 tokens, limiter:prices-api: 5\/5 tokens$/));
    expect(lines).toContainEqual(expect.stringMatching(/^work +1 group paused +0\/3 +3 +-$/));
    expect(lines).toContain("  work: paused groups: globex");
    expect(lines).toContain("  work: busiest groups (pending/running): acme 2/0, globex 1/0");

    const json = JSON.parse((await withConfig("queues", "status", "work", "--groups", "1", "--json")).stdout) as QueueFlowStatus[];
    expect(json).toEqual([
      { name: "work", paused: false, pausedAt: null, pausedGroups: ["globex"], globalConcurrency: 3, groupConcurrency: 1, running: 0, held: 0, pending: 3, buckets: [], groups: [{ group: "acme", pending: 2, running: 0 }], heldBy: null },
    ]);
    expect((await withConfig("queues", "resume", "work", "--group", "globex")).code).toBe(0);
  });

  it("queues status shows a paused queue with the time it was paused, and a queue of the config with no job yet can be paused", async () => {
    const before = Date.now();
    expect((await withConfig("queues", "pause", "mail")).code).toBe(0);
    const [status] = JSON.parse((await withConfig("queues", "status", "mail", "--json")).stdout) as QueueFlowStatus[];
    expect(status!.paused).toBe(true);
    expect(status!.pausedAt).toBeGreaterThanOrEqual(before);
    const table = (await withConfig("queues", "status", "mail")).stdout;
    expect(table).toMatch(new RegExp(`^mail +paused since ${new Date(status!.pausedAt!).toISOString().slice(0, 19).replace("T", " ")}Z +0 +0 +-$`, "m"));
    expect((await withConfig("queues", "resume", "mail")).code).toBe(0);
  });

  it("an unknown queue, a bad group or a bad --groups exits 2 in one line naming it, and pauses nothing", async () => {
    const cases: [string[], string][] = [
      [["queues", "pause", "nope"], 'tickwork queues pause: unknown queue "nope": no config declares it and the database has no job of it (queues: work) (see: tickwork queues pause --help)\n'],
      [["queues", "resume", "work", "--group", ""], 'tickwork queues resume: --group must be a string of 1 to 255 characters, got "" (see: tickwork queues resume --help)\n'],
      [["queues", "pause", "work", "--group", "g".repeat(256)], "tickwork queues pause: --group must be a string of 1 to 255 characters, got a string of 256 characters starting"],
      [["queues", "status", "--groups", "1001"], 'tickwork queues status: --groups must be an integer from 0 to 1000, got "1001" (see: tickwork queues status --help)\n'],
      [["queues", "status", "--groups", "-1"], 'tickwork queues status: --groups must be an integer from 0 to 1000, got "-1" (see: tickwork queues status --help)\n'],
      [["queues", "status", "nope"], 'tickwork queues status: unknown queue "nope"'],
      [["queues", "pause"], "tickwork queues pause: missing the queue to pause (see: tickwork queues pause --help)\n"],
    ];
    for (const [args, message] of cases) {
      const result = await run(...args);
      expect(result.stderr.startsWith(message), `${args.join(" ")}: ${result.stderr}`).toBe(true);
      expect(result.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stdout, args.join(" ")).toBe("");
      expect(result.code, args.join(" ")).toBe(2);
    }
    const noValue = await runCli(["queues", "pause", "work", ...database.args, "--group"], { cwd: work.dir });
    expect(noValue.stderr).toBe("tickwork queues pause: --group needs a value (see: tickwork queues pause --help)\n");
    expect(noValue.code).toBe(2);
    expect(await statusOf("work")).toMatchObject({ paused: false, pausedGroups: [] });
  });
});
