import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { eventually } from "../support/real-time.js";
import { ADMIN_TOKEN, CliProcess, FIXTURES, cliDatabases, runCli, sqliteDatabase, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const CONFIG = join(FIXTURES, "app.config.ts");

/** A producer of the test's own on the CLI's database: it only enqueues. */
async function enqueue(database: CliDatabase, queue: string, payload: unknown): Promise<string> {
  const tw: Tickwork = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  try {
    return (await tw.queue(queue).enqueue(payload)).id;
  } finally {
    await tw.stop();
  }
}

async function jobStatus(database: CliDatabase, id: string): Promise<string | undefined> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  try {
    return (await tw.jobs.get(id))?.status;
  } finally {
    await tw.stop();
  }
}

describe.each(cliDatabases)("tickwork start on $name", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  let start: CliProcess | undefined;
  afterEach(async () => {
    await start?.kill();
    await database.cleanup();
  });
  afterAll(() => work.cleanup());

  const launch = (...args: string[]) => {
    start = new CliProcess(["start", "--config", CONFIG, ...database.args, ...args], { cwd: work.dir, env: { TICKWORK_ADMIN_TOKEN: ADMIN_TOKEN, FIXTURE_MARKERS: work.dir } });
    return start;
  };

  it("serves /healthz and the API, runs jobs, and on SIGTERM lets the running job finish, then exits 0", async () => {
    database = make(work.dir);
    // --json: the events as a log collector reads them, one JSON object per line.
    const cli = launch("--port", "0", "--json");
    const [, url] = await cli.waitForStderr(/admin API and dashboard at (http:\/\/\S+)/, "the server's address");

    const health = await fetch(`${url}healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect((await fetch(`${url}api/queues`)).status).toBe(401);
    expect((await fetch(`${url}api/queues`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);

    const email = await enqueue(database, "emails", { to: "ada@example.com" });
    await eventually(() => existsSync(join(work.dir, `email-${email}`)), "the worker sends the email", 20_000);
    const long = await enqueue(database, "long", { report: "monthly" });
    await cli.waitForEvent("fixture.job_started", "the long job starts", (e) => e.id === long);

    cli.signal("SIGTERM");
    const exit = await cli.exited;
    expect(cli.stderr).toContain("tickwork: SIGTERM: stopping; running jobs get the shutdown grace to finish\ntickwork: stopped\n");
    expect(exit).toEqual({ code: 0, signal: null });
    const names = cli.events().map((e) => e.event);
    expect(names.indexOf("fixture.job_finished")).toBeGreaterThan(-1);
    expect(names.indexOf("fixture.job_finished")).toBeLessThan(names.indexOf("engine.stopped"));
    expect(names).not.toContain("job.released");
    expect(readFileSync(join(work.dir, `long-${long}`), "utf8")).toBe("monthly");
    expect(readFileSync(join(work.dir, "teardown"), "utf8")).toBe("start");
    expect(await jobStatus(database, long)).toBe("succeeded");
    expect(await jobStatus(database, email)).toBe("succeeded");
    await expect(fetch(`${url}healthz`)).rejects.toThrow();
  });

  it("exits at once with code 1 on a second signal, leaving the running job to its lease; without --json, events are text lines", async () => {
    database = make(work.dir);
    const cli = launch("--no-server");
    await cli.waitForStderr(/no server \(--no-server\)/, "the workers start");
    const stuck = await enqueue(database, "stuck", {});
    await cli.waitForStdout(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z info  fixture\\.job_started .*\\bid=${stuck}\\b`, "m"), "the stuck job starts");
    expect(cli.stdout).toMatch(/^\S+Z info {2}engine\.started instanceId=\S+ store=/m);
    expect(cli.stdout).not.toMatch(/^\{/m);
    cli.signal("SIGINT");
    await cli.waitForStderr(/SIGINT: stopping/, "the graceful stop begins");
    cli.signal("SIGINT");
    expect(await cli.exited).toEqual({ code: 1, signal: null });
    expect(cli.stderr).toContain("tickwork: SIGINT again: exiting without waiting for running jobs\n");
    expect(cli.stderr).not.toContain("tickwork: stopped");
    expect(await jobStatus(database, stuck)).toBe("running");
  });
});

describe("tickwork start refuses to run", () => {
  const work = workdir();
  afterAll(() => work.cleanup());

  it("the server without a token, before creating the database (exit 2)", async () => {
    const database = sqliteDatabase(work.dir, "no-token.db");
    const result = await runCli(["start", "--config", CONFIG, ...database.args], { cwd: work.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("tickwork start: the admin server needs a token: set TICKWORK_ADMIN_TOKEN (16 characters or more) or server.token in the config, or pass --no-server (see: tickwork start --help)\n");
    expect(existsSync(join(work.dir, "no-token.db"))).toBe(false);
  });

  it("on a port that is taken (exit 1)", async () => {
    const database = sqliteDatabase(work.dir, "taken.db");
    const env = { TICKWORK_ADMIN_TOKEN: ADMIN_TOKEN, FIXTURE_MARKERS: work.dir };
    const first = new CliProcess(["start", "--config", CONFIG, ...database.args, "--port", "0"], { cwd: work.dir, env });
    try {
      const [, port] = await first.waitForStderr(/admin API and dashboard at http:\/\/127\.0\.0\.1:(\d+)\//, "the first server's port");
      const second = await runCli(["start", "--config", CONFIG, ...database.args, "--port", port!], { cwd: work.dir, env });
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/^tickwork: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/);
    } finally {
      await first.kill();
    }
  });
});
