import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { eventually } from "../support/real-time.js";
import { CliProcess, FIXTURES, cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/** Its setup declares a task and enqueues a job: always, or with SEED_WHEN_SERVING=1 only under start. */
const CONFIG = join(FIXTURES, "seeding.config.ts");

const refusal = (command: string, purpose: string) =>
  `tickwork: config ${CONFIG}: setup wrote to the database, an enqueue (queue.insertMany), under \`tickwork ${command}\`, which runs it with context.purpose "${purpose}": setup may write only when context.purpose is "serve" (tickwork start); nothing was written\n`;

describe.each(cliDatabases)("a config's setup and the purpose of the command on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  let start: CliProcess | undefined;
  const naive = { FIXTURE_MARKERS: work.dir };
  const guarded = { FIXTURE_MARKERS: work.dir, SEED_WHEN_SERVING: "1" };
  const run = (env: Record<string, string>, ...args: string[]) => runCli([...args, ...database.args, "--config", CONFIG], { cwd: work.dir, env });
  const jobs = async () => {
    const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
    try {
      return await tw.jobs.list();
    } finally {
      await tw.stop();
    }
  };
  /** The "command:purpose" of each setup run since the last call. */
  const setupCalls = () => {
    const file = join(work.dir, "setup-calls");
    const calls = existsSync(file) ? readFileSync(file, "utf8").trimEnd().split("\n") : [];
    rmSync(file, { force: true });
    return calls;
  };

  beforeAll(async () => {
    database = make(work.dir);
    expect((await runCli(["migrate", ...database.args], { cwd: work.dir })).code).toBe(0);
  });
  afterEach(async () => {
    await start?.kill();
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it("jobs list three times with a setup that enqueues enqueues nothing: each exits 2 naming the write and the purpose", async () => {
    for (let i = 0; i < 3; i++) {
      const result = await run(naive, "jobs", "list");
      expect(result.stderr).toBe(refusal("jobs list", "inspect"));
      expect(result.stdout).toBe("");
      expect(result.code).toBe(2);
    }
    expect(setupCalls()).toEqual(["jobs list:inspect", "jobs list:inspect", "jobs list:inspect"]);
    expect(await jobs()).toEqual([]);
  });

  it("the read-only commands run setup with purpose inspect, so its tasks are shown, and write nothing", async () => {
    const status = await run(guarded, "status");
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^nightly +every 1d +- +- +\S+ \S+ +0 +active$/m);
    const tasks = await run(guarded, "tasks");
    expect(tasks.code).toBe(0);
    expect(tasks.stdout).toMatch(/^nightly +every 1d /m);
    const list = await run(guarded, "jobs", "list");
    expect([list.code, list.stdout]).toEqual([0, "no jobs\n"]);
    expect((await run(guarded, "queues", "status")).code).toBe(0);
    expect(setupCalls()).toEqual(["status:inspect", "tasks list:inspect", "jobs list:inspect", "queues status:inspect"]);
    expect(await jobs()).toEqual([]);
  });

  it("a command that changes something runs setup with purpose operate, and refuses setup's writes too", async () => {
    const refused = await run(naive, "tasks", "run", "nightly");
    expect(refused.stderr).toBe(refusal("tasks run", "operate"));
    expect(refused.code).toBe(2);

    const ran = await run(guarded, "tasks", "run", "nightly");
    expect(ran.stdout).toMatch(/^nightly: succeeded in \d+ ms: \{"ran":true\}\n$/);
    expect(ran.code).toBe(0);
    expect(setupCalls()).toEqual(["tasks run:operate", "tasks run:operate"]);
    expect(await jobs()).toEqual([]);
  });

  it("start runs setup with purpose serve, where its enqueue goes through", async () => {
    start = new CliProcess(["start", "--no-server", ...database.args, "--config", CONFIG], { cwd: work.dir, env: guarded });
    await start.waitForStderr(/tickwork: started on /, "the worker process starts");
    const [seeded] = await eventually(async () => {
      const found = await jobs();
      return found.length > 0 && found[0]!.status === "succeeded" && found;
    }, "the seeded job runs", 20_000);
    expect(seeded).toMatchObject({ queue: "seeded", payload: { from: "start" } });
    start.signal("SIGTERM");
    expect(await start.exited).toEqual({ code: 0, signal: null });
    expect(setupCalls()).toEqual(["start:serve"]);
  });
});
