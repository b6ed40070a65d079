import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { PermanentJobError } from "../../src/queue/errors.js";
import { BIN, FIXTURES, childEnv, runCli, sqliteDatabase, workdir, type CliDatabase } from "./fixtures/cli.js";
import { TmuxSession } from "./fixtures/tmux.js";

// Each test runs tickwork processes (node + tsx) in a terminal: generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "app.config.ts");

/** An engine of the test's own on top's database: it enqueues, and runs the jobs as another process would. */
async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  tw.queue<{ to: string }>("emails", {
    handler: (job) => {
      if (job.payload.to === "nobody") throw new PermanentJobError("no such address");
    },
  });
  try {
    return await fn(tw);
  } finally {
    await tw.stop();
  }
}

const row = (queue: string, state: string, pending: number, running: number, failed: number, succeeded: number) =>
  new RegExp(`^${queue} +${state} +${pending} +${running} +${failed} +${succeeded} +(-|\\d+\\.\\d)$`, "m");

describe("tickwork top in a real terminal (tmux)", () => {
  const work = workdir();
  const database = sqliteDatabase(work.dir);
  let terminal: TmuxSession | undefined;
  /**
   * top in a shell that then says how it exited and waits for a line, so the terminal can be looked
   * at as the user would find it (tmux reports a dead pane's cursor as hidden).
   */
  const launch = async (name: string) => {
    terminal = new TmuxSession(work.dir, name, childEnv());
    const top = [process.execPath, BIN, "top", "--interval", "500ms", "--config", CONFIG, ...database.args].map((a) => `'${a}'`).join(" ");
    await terminal.start(`${top}; echo "top exited with $?"; read line`, work.dir);
    return terminal;
  };
  const exitOf = async (top: TmuxSession, what: string) => Number(/top exited with (\d+)/.exec(await top.waitForScreen((s) => /top exited with \d+/.test(s), what))![1]);

  beforeAll(async () => {
    expect((await runCli(["migrate", ...database.args], { cwd: work.dir })).code).toBe(0);
    await withEngine(database, async (tw) => {
      for (const to of ["ada", "grace", "linus"]) await tw.enqueue("emails", { to });
    });
  });
  afterEach(async () => {
    await terminal?.kill();
  });
  afterAll(() => work.cleanup());

  it("shows the queues' counts and the config's tasks, follows the database as it changes, and quits on q restoring the terminal", async () => {
    const top = await launch("top-q");
    const first = await top.waitForScreen((s) => row("emails", "active", 3, 0, 0, 0).test(s) && /^where +every 1d /m.test(s), "the first frame");
    expect(first).toMatch(/^tickwork top · SQLite \S+tickwork\.db · config \S+app\.config\.ts · \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ · every 500ms · q quits$/m);
    expect(first).toMatch(/^QUEUE +STATE +PENDING +RUNNING +FAILED +SUCCEEDED +DONE\/S$/m);
    expect(first).toMatch(row("long", "active", 0, 0, 0, 0));
    expect(first).toMatch(/^TASK +SCHEDULE +NEXT RUN +LAST RUN +OUTCOME +STATE$/m);
    for (const task of ["broken", "hello"]) expect(first).toMatch(new RegExp(`^${task} +every 1h +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ +- +- +active$`, "m"));
    // On the alternate screen, the cursor hidden, as htop draws.
    expect([await top.pane("alternate_on"), await top.pane("cursor_flag")]).toEqual(["1", "0"]);

    await withEngine(database, async (tw) => {
      await tw.enqueue("emails", { to: "edsger" });
      await tw.enqueue("emails", { to: "nobody" });
    });
    await top.waitForScreen((s) => row("emails", "active", 5, 0, 0, 0).test(s), "the two new jobs");

    // Another process runs them: four succeed, one fails, and the rate shows the work done. DONE/S
    // counts the last ten seconds, so the screen is read right after the jobs ran, before the engine's
    // stop (which a loaded machine can make take a while).
    const finished = row("emails", "active", 0, 0, 1, 4);
    await withEngine(database, async (tw) => {
      while ((await tw.jobs.counts("emails"))[0]!.counts.pending > 0) await tw.tick();
      await top.waitForScreen((s) => Number(finished.exec(s)?.[1]) > 0, "the jobs' outcomes with a rate above 0");
    });

    expect((await runCli(["queues", "pause", "emails", ...database.args], { cwd: work.dir })).code).toBe(0);
    await top.waitForScreen((s) => row("emails", "paused", 0, 0, 1, 4).test(s), "the pause from another command");

    await top.keys("q");
    expect(await exitOf(top, "top after q")).toBe(0);
    // The terminal is as it was: the normal screen (the frames were on the other one), the cursor shown.
    expect([await top.pane("alternate_on"), await top.pane("cursor_flag")]).toEqual(["0", "1"]);
    const after = await top.screen();
    expect(after).toContain("top exited with 0");
    expect(after).not.toContain("QUEUE");
  });

  it("quits on Ctrl-C too, with exit code 0", async () => {
    const top = await launch("top-ctrl-c");
    await top.waitForScreen((s) => /^emails +(active|paused) +\d/m.test(s), "the first frame");
    await top.keys("C-c");
    expect(await exitOf(top, "top after Ctrl-C")).toBe(0);
    expect([await top.pane("alternate_on"), await top.pane("cursor_flag")]).toEqual(["0", "1"]);
  });
});
