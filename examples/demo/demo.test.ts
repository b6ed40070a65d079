import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * `npm start`'s promise to a newcomer, checked on the real thing: the demo runs as its own process
 * (every example, their fake upstreams as real HTTP servers, one SQLite file), and within a minute
 * the admin API shows jobs succeeding, retries, a task backing off on the rate limit, and the 77-way
 * fan-out converging after failures; then SIGINT stops it gracefully with exit code 0.
 */
describe("npm start: the one-process demo", () => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/demo/main.ts"], {
    cwd: REPO,
    env: { ...process.env, PORT: "0", TICKWORK_ADMIN_TOKEN: "demo-test-token-0123456789" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const dashboard = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      const match = /dashboard\s+(http:\/\/127\.0\.0\.1:\d+\/)#token=/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`the demo exited (${code}) before printing its dashboard URL:\n${output.join("\n")}\n${stderr}`)));
  });
  afterAll(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });

  const auth = { authorization: "Bearer demo-test-token-0123456789" };
  const get = async <T>(base: string, path: string): Promise<T> => {
    const res = await fetch(`${base}${path}`, { headers: auth });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };

  it("shows jobs running, retries, a rate-limit backoff, callbacks and fan-out convergence within a minute, then stops gracefully on SIGINT", async () => {
    const base = await dashboard;
    expect((await fetch(`${base}healthz`)).status).toBe(200);
    const page = await fetch(base);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");

    const seen = { succeeded: false, retried: false, backedOff: false, converged: false, replayed: false, callbacks: false };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && Object.values(seen).some((v) => !v)) {
      const metrics = await (await fetch(`${base}metrics`, { headers: auth })).text();
      seen.succeeded ||= /tickwork_job_succeeded_total\{queue="payments"\} [1-9]/.test(metrics);
      seen.retried ||= /tickwork_job_retries_total\{queue="payments"\} [1-9]/.test(metrics);
      seen.callbacks ||= /tickwork_delivery_items_emitted_total\{delivery="account-extremes.hourly"\} [1-9]/.test(metrics) && /tickwork_delivery_retries_total\{delivery="account-extremes.hourly"\} [1-9]/.test(metrics);
      seen.backedOff ||= /tickwork_task_runs_total\{task="tenero-prices",outcome="backed_off"\} [1-9]/.test(metrics);
      const { fanouts } = await get<{ fanouts: { name: string; converged: boolean; version: number; targets: unknown[] }[] }>(base, "api/fanouts");
      const symbols = fanouts.find((f) => f.name === "symbol-fanout.symbols");
      seen.converged ||= !!symbols && symbols.targets.length === 77 && symbols.converged && output.some((l) => / push(es)? failed/.test(l));
      seen.replayed ||= output.some((l) => l.includes("paper-orders:") && l.includes("replayed (Idempotent-Replayed: true), executed once"));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect(seen).toEqual({ succeeded: true, retried: true, backedOff: true, converged: true, replayed: true, callbacks: true });

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(output.some((l) => l.includes("stopping gracefully"))).toBe(true);
    expect(output.at(-1)).toContain("stopped");
  }, 90_000);
});
