import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createTickwork } from "../../../src/tickwork.js";
import { sqlite } from "../../../src/store/sqlite.js";
import { deferred, within } from "../../support/real-time.js";
import { denoRuntime, type DenoChildProcess } from "./deno-runtime.js";

/**
 * The SIGTERM test of test/runtime, for Deno: the same worker fixture, started as `deno run` (the
 * Node test's `--import tsx` is not a Deno flag, and `--sloppy-imports` lets Deno load the sources'
 * `.js` specifiers of `.ts` files), and watched with Deno.Command, whose status says how the
 * process really ended (node:child_process under Deno reports a killed child as ended by the
 * signal even when it exits 0 by itself).
 */
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "..", "fixtures", "sigterm-worker.ts");
const ROOT = resolve(here, "..", "..", "..");

async function enqueueLongJob(dbPath: string): Promise<string> {
  const tw = await createTickwork({ store: sqlite(dbPath), logger: () => {}, handleSignals: false });
  try {
    return (await tw.queue("long").enqueue({ report: "monthly" })).id;
  } finally {
    await tw.stop();
  }
}

/** Reads the child's stdout, one JSON event a line, into `events`; `onEvent` sees each one. */
async function readEvents(child: DenoChildProcess, events: { event: string; id?: string }[], onEvent: (e: { event: string; id?: string }) => void): Promise<void> {
  let buffered = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    const lines = (buffered + chunk).split("\n");
    buffered = lines.pop()!;
    for (const text of lines.filter(Boolean)) {
      const event = JSON.parse(text) as { event: string; id?: string };
      events.push(event);
      onEvent(event);
    }
  }
}

describe("SIGTERM to a Deno process running tw.start() on SQLite", () => {
  it.each([
    // tickwork stops gracefully, then re-raises the signal: the process ends as SIGTERM would have ended it.
    { mode: "default", expected: { success: false, code: 143, signal: "SIGTERM" } },
    // The application listens for SIGTERM too: after the stop nothing is left running, so the process exits 0 by itself.
    { mode: "app-listener", expected: { success: true, code: 0, signal: null } },
  ] as const)("lets the running job finish, records it, then exits ($mode)", async ({ mode, expected }) => {
    const deno = denoRuntime();
    const dir = mkdtempSync(join(tmpdir(), "tickwork-sigterm-deno-"));
    const dbPath = join(dir, "tickwork.db");
    const marker = join(dir, "job-finished");
    const id = await enqueueLongJob(dbPath);

    const child = new deno.Command(deno.execPath(), {
      args: ["run", "--allow-all", "--sloppy-imports", FIXTURE, dbPath, marker, mode],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let exited = false;
    void child.status.then(() => (exited = true));
    try {
      const events: { event: string; id?: string }[] = [];
      const started = deferred<string>();
      const stderr = new Response(child.stderr).text();
      const reading = readEvents(child, events, (e) => {
        if (e.event === "fixture.job_started") started.resolve(e.id!);
      });
      void child.status.then(async () => started.reject(new Error(`the worker exited before the job started; stderr: ${await stderr}`)));

      expect(await within(started.promise, 20_000, "the worker process starts the job")).toBe(id);
      expect(existsSync(marker)).toBe(false);
      child.kill("SIGTERM");
      const status = await within(child.status, 20_000, "the worker process exits after SIGTERM");
      await reading;

      expect(await stderr).toBe("");
      expect(status).toEqual(expected);
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
      if (!exited) {
        child.kill("SIGKILL");
        await child.status;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
