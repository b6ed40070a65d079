import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { within } from "../support/real-time.js";
import { BIN, childEnv, sqliteDatabase, workdir, type CliDatabase } from "./fixtures/cli.js";

// Each test runs a tickwork process (node + tsx): generous limits for a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/**
 * Runs the CLI with its stdout on a pipe that this side closes after the first chunk, as
 * `tickwork jobs list | head -2` does: the command's next write finds no reader.
 */
async function readFirstChunkThenClose(args: string[], cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; first: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  const first = await within(new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")))), 50_000, "the first chunk on stdout");
  child.stdout.destroy();
  try {
    return { ...(await within(exited, 50_000, `tickwork ${args.join(" ")} to end`)), first, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

describe("a reader that closes stdout early (tickwork ... | head)", () => {
  const work = workdir();
  let database: CliDatabase;

  beforeAll(async () => {
    database = sqliteDatabase(work.dir);
    // Enough jobs that a page of them as JSON is larger than a pipe's buffer: the command is still
    // writing when the reader goes.
    const tw = await createTickwork({ store: database.open(), logger: () => {}, handleSignals: false });
    await tw.queue("emails").enqueueMany(Array.from({ length: 600 }, (_, i) => ({ payload: { to: `user-${i}@example.com`, body: "x".repeat(200) } })));
    await tw.stop();
  });
  afterAll(() => work.cleanup());

  it("ends a one-shot command with exit 0 and no stack trace", async () => {
    const result = await readFirstChunkThenClose(["jobs", "list", "--limit", "500", "--json", ...database.args], work.dir);
    expect(result.first.startsWith("[")).toBe(true);
    expect(result.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(result).toMatchObject({ code: 0, signal: null });
  });

  it("stops `start` gracefully, as on SIGTERM, with exit 0", async () => {
    const config = work.write(
      "busy.config.mjs",
      `export default async (tw, context) => {
         const mail = tw.queue("mail", { concurrency: 2, handler: async () => {} });
         if (context.command === "start") await mail.enqueueMany(Array.from({ length: 2000 }, (_, i) => ({ payload: { i } })));
       };`,
    );
    // Debug events, one or more per job, keep stdout busy while the jobs run.
    const result = await readFirstChunkThenClose(["start", "--no-server", "--json", "--log-level", "debug", "--config", config, ...database.args], work.dir);
    expect(JSON.parse(result.first.split("\n")[0]!)).toMatchObject({ event: "engine.started" });
    expect(result.stderr).toMatch(/^tickwork: SIGTERM: stopping; running jobs get the shutdown grace to finish$/m);
    expect(result.stderr).toMatch(/^tickwork: stopped$/m);
    expect(result.stderr).not.toMatch(/EPIPE|again/);
    expect(result).toMatchObject({ code: 0, signal: null });
  });
});
