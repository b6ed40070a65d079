import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunResult, TaskStatus } from "../../src/schedule/task.js";
import { FIXTURES, cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "app.config.ts");

interface StatusJson {
  config: string | null;
  scheduler: { pausedUntil: number | null; tasks: TaskStatus[] };
}

describe.each(cliDatabases)("tickwork tasks and status on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  const env = { FIXTURE_MARKERS: work.dir };
  const run = (...args: string[]) => runCli([...args, ...database.args], { cwd: work.dir, env });
  const withConfig = (...args: string[]) => run(...args, "--config", CONFIG);
  const status = async () => JSON.parse((await withConfig("status", "--json")).stdout) as StatusJson;
  const task = async (name: string) => (await status()).scheduler.tasks.find((t) => t.name === name)!;

  beforeAll(async () => {
    database = make(work.dir);
    expect((await run("migrate")).code).toBe(0);
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it("status lists the config's tasks, those of setup included", async () => {
    const result = await withConfig("status");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^config +.*app\.config\.ts$/m);
    expect(result.stdout).toMatch(/^TASK +SCHEDULE +LAST RUN +OUTCOME +NEXT RUN +FAILURES +STATE$/m);
    for (const [name, schedule] of [["broken", "every 1h"], ["hello", "every 1h"], ["where", "every 1d"]]) {
      expect(result.stdout).toMatch(new RegExp(`^${name} +${schedule} +- +- +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ +0 +active$`, "m"));
    }
  });

  it("tasks alone lists the config's tasks, those of setup included, as tasks list does; --json gives their status", async () => {
    const alone = await withConfig("tasks");
    expect(alone.stderr).toBe("");
    expect(alone.code).toBe(0);
    const lines = alone.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TASK +SCHEDULE +LAST RUN +OUTCOME +NEXT RUN +FAILURES +STATE$/);
    expect(lines.slice(1).map((line) => line.split(/ {2,}/).slice(0, 2))).toEqual([["broken", "every 1h"], ["hello", "every 1h"], ["where", "every 1d"]]);
    expect((await withConfig("tasks", "list")).stdout).toBe(alone.stdout);

    const json = await withConfig("tasks", "--json");
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as StatusJson["scheduler"];
    expect(listed.tasks.map((t) => t.name)).toEqual(["broken", "hello", "where"]);
    expect(listed.pausedUntil).toBeNull();
  });

  it("tasks without a config exits 2 in one line: the tasks are the config's", async () => {
    const result = await run("tasks");
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("tickwork tasks list: no config file: pass --config <file>, set TICKWORK_CONFIG, or create ./tickwork.config.ts (see: tickwork tasks list --help)\n");
  });

  it("tasks run runs a task in this process with the config's code and prints its result", async () => {
    const result = await withConfig("tasks", "run", "hello");
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^hello: succeeded in \d+ ms: \{"said":"hello"\}\n$/);
    expect(result.code).toBe(0);
    expect(await task("hello")).toMatchObject({ lastOutcome: "succeeded", lastResult: { said: "hello" }, runs: 1 });
  });

  it("tasks run gives setup the database, the command and its purpose, and runs the teardown after", async () => {
    const [result] = JSON.parse((await withConfig("tasks", "run", "where", "--json")).stdout) as RunResult[];
    expect(result).toMatchObject({ task: "where", outcome: "succeeded", result: { database: database.target.kind, command: "tasks run", purpose: "operate" } });
    expect(readFileSync(join(work.dir, "teardown"), "utf8")).toBe("tasks run");
  });

  it("tasks run exits 1 when a run fails, with the failure on stdout and its event on stderr: a text line, JSON with --json", async () => {
    const result = await withConfig("tasks", "run", "broken");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^broken: failed in \d+ ms: Error: the upstream is down\n$/);
    expect(result.stderr).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z error task\.failed task=broken .*error="Error: the upstream is down\\n/);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);

    const json = await withConfig("tasks", "run", "broken", "--json");
    expect(json.code).toBe(1);
    const events = json.stderr.trimEnd().split("\n").map((line) => JSON.parse(line) as { event: string; task: string });
    expect(events.map((e) => [e.event, e.task])).toEqual([["task.failed", "broken"]]);
  });

  it("tasks run all runs every task; status then shows outcomes and the last error", async () => {
    const result = await withConfig("tasks", "run", "all", "--json");
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as RunResult[]).map((r) => [r.task, r.outcome]).sort()).toEqual([["broken", "failed"], ["hello", "succeeded"], ["where", "succeeded"]]);
    const table = (await withConfig("status")).stdout;
    // Its third failure in a row: the test before ran it twice (text events, then --json).
    expect(table).toMatch(/^broken +every 1h +\S+ \S+ +failed +\S+ \S+ +3 +active$/m);
    expect(table).toContain("  broken: Error: the upstream is down");
  });

  it("tasks run refuses an unknown task (exit 2) and needs a config", async () => {
    const unknown = await withConfig("tasks", "run", "sweep");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^tickwork tasks run: unknown task "sweep" \(.*app\.config\.ts defines: broken, hello, where\) \(see: tickwork tasks run --help\)\n$/);
    const noConfig = await run("tasks", "run", "hello");
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toBe("tickwork tasks run: no config file: pass --config <file>, set TICKWORK_CONFIG, or create ./tickwork.config.ts (see: tickwork tasks run --help)\n");
  });

  it("tasks pause without a name pauses every task, with no config needed; tasks resume ends it", async () => {
    const before = Date.now();
    const paused = await run("tasks", "pause", "--for", "2h", "--json");
    expect(paused.code).toBe(0);
    const { pausedUntil } = JSON.parse(paused.stdout) as { pausedUntil: number };
    expect(pausedUntil).toBeGreaterThanOrEqual(before + 7_200_000);
    expect(pausedUntil).toBeLessThan(Date.now() + 7_200_000);
    const seen = await status();
    expect(seen.scheduler.pausedUntil).toBe(pausedUntil);
    expect(seen.scheduler.tasks.every((t) => t.paused)).toBe(true);
    expect((await withConfig("status")).stdout).toContain(`every task is paused until ${new Date(pausedUntil).toISOString().slice(0, 19).replace("T", " ")}Z (tickwork tasks resume)`);

    const resumed = await run("tasks", "resume");
    expect(resumed.stdout).toBe("every task resumed: pauses ended, breakers closed\n");
    expect((await status()).scheduler).toMatchObject({ pausedUntil: null });
  });

  it("tasks pause <task> --until pauses that task only, and needs the config that defines it", async () => {
    const until = "2099-01-01T00:00:00Z";
    const result = await withConfig("tasks", "pause", "hello", "--until", until);
    expect(result.stdout).toBe("task hello paused until 2099-01-01 00:00:00Z\n");
    expect(await task("hello")).toMatchObject({ paused: true, pausedUntil: Date.parse(until) });
    expect(await task("broken")).toMatchObject({ paused: false, pausedUntil: null });
    expect((await withConfig("status")).stdout).toMatch(/^hello .* paused until 2099-01-01 00:00:00Z$/m);

    const noConfig = await run("tasks", "pause", "hello", "--for", "1h");
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toBe("tickwork tasks pause: naming a task needs the config that defines it (--config <file>); without a name, tasks pause applies to every task (see: tickwork tasks pause --help)\n");

    expect((await withConfig("tasks", "resume", "hello")).stdout).toBe("task hello resumed: pauses ended, breakers closed\n");
    expect(await task("hello")).toMatchObject({ paused: false, pausedUntil: null });
  });
});
