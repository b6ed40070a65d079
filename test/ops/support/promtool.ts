import { spawnSync } from "node:child_process";

/**
 * Runs Prometheus's own checker (Debian's `prometheus` package; `PROMTOOL` names another binary).
 * A missing promtool fails the test that needs it instead of skipping it: .ci/run installs it, and
 * a check that silently stops running is worse than none.
 */
export function promtool(args: string[], cwd?: string, input?: string): { status: number; output: string } {
  const bin = process.env.PROMTOOL ?? "promtool";
  const run = spawnSync(bin, args, { cwd, input, encoding: "utf8", timeout: 60_000 });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new Error(`promtool is not installed (looked for "${bin}"): apt-get install prometheus, as .ci/run does`);
  }
  if (run.error) throw run.error;
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}
