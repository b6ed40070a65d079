/**
 * A periodic task run by several scheduler processes; the process running a slot is SIGKILLed
 * mid-run (and replaced), and the slot must be taken over by another process once the run's lease
 * lapses. Then the task must go on: a few more slots after the last takeover.
 */
import { readLedgers } from "../ledger.js";
import { emptyReport, recordVerdict, type ScenarioReport } from "../report.js";
import { judgeSlots } from "../verdict/slots.js";
import { pause, until } from "../wait.js";
import type { RunnerConfig } from "../processes/runner.js";
import type { Environment } from "./environment.js";
import { Flight } from "./flight.js";

export async function runPeriodic(env: Environment): Promise<ScenarioReport> {
  const { settings } = env;
  const started = Date.now();
  const planned = settings.faults ?? (settings.quick ? 2 : 5);
  const every = settings.taskEveryMs;
  const workMs: [number, number] = [Math.round(every * 0.4), Math.round(every * 0.9)];
  const report = emptyReport(
    "periodic",
    env.store,
    `${settings.runners} scheduler processes, task every ${every} ms, lease ${settings.taskLeaseMs} ms, runs of ${workMs[0]}-${workMs[1]} ms, ${planned} × SIGKILL of the process running a slot (replaced at once), ledger fsync ${settings.fsync ? "on" : "off"}`,
  );
  const flight = new Flight(env.ledgerDir);
  const config: RunnerConfig = { ...env.childBase(), everyMs: every, leaseMs: settings.taskLeaseMs, workMs };
  const spawn = async () => {
    const r = env.processes.spawn("runner", "runner.ts", config);
    await r.waitFor("ready", 90_000);
    return r;
  };
  await Promise.all(Array.from({ length: settings.runners }, spawn));
  await until(() => flight.count("run.done") >= 2, "the task's first runs", 60_000);

  let kills = 0;
  for (let i = 0; i < planned; i++) {
    await pause(env.random.between(settings.gapMs[0], settings.gapMs[1]));
    const { runner, slot } = await until(
      () => {
        for (const runner of env.processes.alive("runner")) {
          const run = flight.of(runner.pid)[0];
          if (run) return { runner, slot: run.item };
        }
        return undefined;
      },
      "a runner in the middle of a run",
      30_000,
      10,
    );
    const killedAt = Date.now();
    await runner.kill();
    env.controller.append("fault.kill", { target: runner.pid, at: killedAt, dead: Date.now(), slot: Number(slot) });
    kills++;
    await spawn();
    // The killed run's slot is taken over by another process once its lease lapses.
    await until(() => flight.startsOf(slot).some((s) => s.pid !== runner.pid && s.t >= killedAt), `slot ${slot} to be taken over`, 3 * settings.taskLeaseMs + 2 * every + 30_000, 50).catch((error: unknown) =>
      report.notes.push(String(error)),
    );
  }
  // The task goes on after the last takeover.
  const doneBefore = flight.count("run.done");
  await until(() => flight.count("run.done") >= doneBefore + 3, "three more runs after the last takeover", 10 * every + 60_000).catch((error: unknown) => {
    report.error = String(error);
  });
  for (const dead of env.processes.diedOnTheirOwn()) report.failures.push(dead.deathNote());
  env.controller.append("teardown");
  await env.processes.killAll();

  const { records, faults: torn } = readLedgers(env.ledgerDir);
  for (const t of torn) report.failures.push(`ledger fault in ${t.file} line ${t.line}: ${t.text}`);
  const v = judgeSlots(records, every, settings.taskLeaseMs);
  report.items = `${v.slots} slots (${v.runs} runs, ${v.skipped} skipped as overlaps)`;
  report.faults = { kills };
  recordVerdict(report, v);
  report.durationMs = Date.now() - started;
  return report;
}
