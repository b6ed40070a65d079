import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { sqlite } from "../../src/store/sqlite.js";
import { deferred, within } from "../support/real-time.js";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "fixtures", "sigterm-worker.ts");
const ROOT = resolve(here, "..", "..");

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Enqueues one job on the "long" queue of a fresh SQLite file, from this process, and returns its id. */
async function enqueueLongJob(dbPath: string): Promise<string> {
  const tw = await createTickwork({ store: sqlite(dbPath), logger: () => {}, handleSignals: false });
  try {
    return (await tw.queue("long").enqueue({ report: "monthly" })).id;
  } finally {
    await tw.stop();
  }
}

describe("SIGTERM to a process running tw.start() on SQLite", () => {
  it.each([
    // tickwork stops gracefully, then re-raises the signal: the process ends as SIGTERM would have ended it.
    { mode: "default", expected: { code: null, signal: "SIGTERM" } },
    // The application listens for SIGTERM too: after the stop nothing is left running, so the process exits 0 by itself.
    { mode: "app-listener", expected: { code: 0, signal: null } },
  ] as const)("lets the running job finish, records it, then exits ($mode)", async ({ mode, expected }) => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-sigterm-"));
    const dbPath = join(dir, "tickwork.db");
    const marker = join(dir, "job-finished");
    const id = await enqueueLongJob(dbPath);

    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, dbPath, marker, mode], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const events: { event: string; [field: string]: unknown }[] = [];
      let stderr = "";
      const started = deferred<string>();
      const exited = deferred<Exit>();
      child.on("exit", (code, signal) => exited.resolve({ code, signal }));
      child.on("error", (error) => started.reject(error));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      let buffered = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        const lines = (buffered + chunk).split("\n");
        buffered = lines.pop()!;
        for (const text of lines.filter(Boolean)) {
          const event = JSON.parse(text) as { event: string; id?: string };
          events.push(event);
          if (event.event === "fixture.job_started") started.resolve(event.id!);
        }
      });
      void exited.promise.then(() => started.reject(new Error(`the worker exited before the job started; stderr: ${stderr}`)));

      expect(await within(started.promise, 20_000, "the worker process starts the job")).toBe(id);
      expect(existsSync(marker)).toBe(false);
      child.kill("SIGTERM");
      const exit = await within(exited.promise, 20_000, "the worker process exits after SIGTERM");

      expect(stderr).toBe("");
      expect(exit).toEqual(expected);
      expect(readFileSync(marker, "utf8")).toBe(id);
      const names = events.map((e) => e.event);
      expect(names).toContain("engine.stopped");
      expect(names.indexOf("fixture.job_finished")).toBeLessThan(names.indexOf("engine.stopped"));
      expect(events.filter((e) => e.event === "job.succeeded").map((e) => e.id)).toEqual([id]);
      expect(names).not.toContain("job.released");

      const tw = await createTickwork({ store: sqlite(dbPath), logger: () => {}, handleSignals: false });
      try {
        expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1, lastError: null });
      } finally {
        await tw.stop();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
