import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { PermanentJobError } from "../../src/queue/errors.js";
import type { Job } from "../../src/queue/job.js";
import { cliDatabases, runCli, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs tickwork processes (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/** An engine of the test's own on the CLI's database: it makes jobs, and checks what the CLI did to them. */
async function withEngine<T>(database: CliDatabase, fn: (tw: Tickwork) => Promise<T>): Promise<T> {
  const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
  tw.queue<{ to: string }>("emails", {
    handler: (job) => {
      if (job.payload.to === "nobody") throw new PermanentJobError("no such address");
    },
  });
  tw.queue("reports");
  try {
    return await fn(tw);
  } finally {
    await tw.stop();
  }
}

describe.each(cliDatabases)("tickwork jobs on $name (no config: queues come from the store)", ({ make }) => {
  const work = workdir();
  let database: CliDatabase;
  /** sent: succeeded; bounced: failed; later: pending, due in an hour; monthly: pending, with a key. */
  const ids = { sent: "", bounced: "", later: "", monthly: "" };
  const run = (...args: string[]) => runCli([...args, ...database.args], { cwd: work.dir });
  const json = async <T>(...args: string[]): Promise<T> => {
    const result = await run(...args, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as T;
  };
  const statusOf = (id: string) => withEngine(database, async (tw) => (await tw.jobs.get(id))?.status);

  beforeAll(async () => {
    database = make(work.dir);
    await withEngine(database, async (tw) => {
      ids.sent = (await tw.enqueue("emails", { to: "ada@example.com" })).id;
      ids.bounced = (await tw.enqueue("emails", { to: "nobody" })).id;
      await tw.tick();
      ids.later = (await tw.enqueue("reports", { month: "2026-01" }, { delay: "1h" })).id;
      ids.monthly = (await tw.enqueue("reports", { month: "2026-02" }, { key: "monthly" })).id;
    });
  });
  afterAll(async () => {
    await database.cleanup();
    work.cleanup();
  });

  it("lists every job newest first in a table", async () => {
    const result = await run("jobs", "list");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +QUEUE +STATUS +ATTEMPTS +RUN AT +KEY +LAST ERROR$/);
    expect(lines.slice(1).map((line) => line.trim().split(/ +/).slice(0, 4))).toEqual([
      [ids.monthly, "reports", "pending", "0/5"],
      [ids.later, "reports", "pending", "0/5"],
      [ids.bounced, "emails", "failed", "1/5"],
      [ids.sent, "emails", "succeeded", "1/5"],
    ]);
    expect(lines[3]).toContain("PermanentJobError: no such address");
  });

  it("filters by status, queue and key, and prints the jobs as JSON", async () => {
    expect((await json<Job[]>("jobs", "list", "--status", "failed")).map((j) => [j.id, j.lastError?.split("\n")[0]])).toEqual([[ids.bounced, "PermanentJobError: no such address"]]);
    expect((await json<Job[]>("jobs", "list", "--queue", "reports", "--key", "monthly")).map((j) => j.id)).toEqual([ids.monthly]);
    expect((await json<Job[]>("jobs", "list", "--queue", "emails")).map((j) => j.id)).toEqual([ids.bounced, ids.sent]);
  });

  it("filters pending jobs by due now or scheduled for later, and jobs by attempts started, as the job browser does", async () => {
    const listed = async (...args: string[]) => (await json<Job[]>("jobs", "list", ...args)).map((j) => j.id);
    expect(await listed("--state", "due")).toEqual([ids.monthly]);
    expect(await listed("--state", "scheduled")).toEqual([ids.later]);
    expect(await listed("--state", "scheduled", "--status", "pending", "--queue", "reports")).toEqual([ids.later]);
    expect(await listed("--min-attempts", "1")).toEqual([ids.bounced, ids.sent]);
    expect(await listed("--min-attempts", "1", "--status", "failed")).toEqual([ids.bounced]);
    expect(await listed("--min-attempts", "2")).toEqual([]);
  });

  it("pages with --limit and --before, and says where the next page starts", async () => {
    const first = await run("jobs", "list", "--limit", "2", "--json");
    expect((JSON.parse(first.stdout) as Job[]).map((j) => j.id)).toEqual([ids.monthly, ids.later]);
    expect(first.stderr).toBe(`more may follow: add --before ${ids.later}\n`);
    const second = await run("jobs", "list", "--limit", "3", "--before", ids.later, "--json");
    expect((JSON.parse(second.stdout) as Job[]).map((j) => j.id)).toEqual([ids.bounced, ids.sent]);
    expect(second.stderr).toBe("");
  });

  it("refuses a queue that neither a config nor the store knows, exit 2", async () => {
    const result = await run("jobs", "list", "--queue", "invoices");
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('tickwork jobs list: unknown queue "invoices": no config declares it and the database has no job of it (queues: emails, reports) (see: tickwork jobs list --help)\n');
  });

  it("retries a failed job, and refuses to retry a succeeded one with exit 1", async () => {
    const retried = await run("jobs", "retry", ids.bounced);
    expect(retried.stderr).toBe("");
    expect(retried.stdout).toBe(`job ${ids.bounced} (emails) is pending again\n`);
    expect(retried.code).toBe(0);
    expect(await statusOf(ids.bounced)).toBe("pending");

    const refused = await run("jobs", "retry", ids.sent);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`tickwork: job ${ids.sent} is succeeded; only failed or cancelled jobs can be retried\n`);
  });

  it("retries every failed job of a queue with --failed --queue", async () => {
    await withEngine(database, (tw) => tw.tick());
    expect(await statusOf(ids.bounced)).toBe("failed");
    expect(await json("jobs", "retry", "--failed", "--queue", "emails")).toEqual({ queue: "emails", retried: 1 });
    expect(await statusOf(ids.bounced)).toBe("pending");
  });

  it("cancels each job given, reports the ones it cannot, and exits 1 if any", async () => {
    const result = await run("jobs", "cancel", ids.later, "999999", ids.monthly);
    expect(result.stdout).toBe(`job ${ids.later} (reports) cancelled\njob ${ids.monthly} (reports) cancelled\n`);
    expect(result.stderr).toBe("tickwork: job 999999 does not exist (it may have been pruned by retention)\n");
    expect(result.code).toBe(1);
    expect([await statusOf(ids.later), await statusOf(ids.monthly)]).toEqual(["cancelled", "cancelled"]);

    const again = await run("jobs", "cancel", ids.later, "--json");
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual([{ id: ids.later, ok: false, code: "TW_JOB_STATE", error: `job ${ids.later} is cancelled; only pending or running jobs can be cancelled` }]);
  });

  it("cancels every pending job of a queue with --pending --queue, and wants the queue, exit 2", async () => {
    expect(await statusOf(ids.bounced)).toBe("pending"); // retried above
    const result = await run("jobs", "cancel", "--pending", "--queue", "emails");
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("1 pending job of queue emails cancelled\n");
    expect(result.code).toBe(0);
    expect([await statusOf(ids.bounced), await statusOf(ids.sent)]).toEqual(["cancelled", "succeeded"]);
    expect(await json("jobs", "cancel", "--pending", "--queue", "emails")).toEqual({ queue: "emails", cancelled: 0 });

    const bare = await run("jobs", "cancel", "--pending");
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("--pending needs --queue <name>");
  });

  // Last: the flow's jobs would show in the lists above.
  it("lists a flow parent's children with --parent, and refuses a bad id, exit 2", async () => {
    const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
    tw.queue("emails");
    const reports = tw.queue("reports");
    const { parent, children } = await (async () => {
      const root = await reports.enqueueFlow({ payload: { month: "2026-03" }, children: [{ queue: "emails", payload: { to: "a@example.com" } }, { queue: "emails", payload: { to: "b@example.com" } }] });
      return { parent: root.id, children: (await tw.jobs.list({ parent: root.id, order: "oldest" })).map((j) => j.id) };
    })().finally(() => tw.stop());
    expect(children).toHaveLength(2);
    expect((await json<Job[]>("jobs", "list", "--parent", parent)).map((j) => j.id)).toEqual([...children].reverse());
    const bad = await run("jobs", "list", "--parent", "abc");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--parent");
  });
});
