/**
 * Idempotency races across processes: several processes call `tw.idempotency.run` with the same
 * keys at the same moments; in turn one that is running an operation is SIGKILLed (and replaced) or
 * frozen past staleAfter and thawed. Each key's operation must run once, except the documented
 * takeover of a dead or frozen owner's stale claim, and all callers must get one answer per key.
 */
import { readLedgers } from "../ledger.js";
import { emptyReport, recordVerdict, type ScenarioReport } from "../report.js";
import { judgeKeys } from "../verdict/keys.js";
import { pause, until } from "../wait.js";
import type { RacerConfig } from "../processes/racer.js";
import type { Environment } from "./environment.js";
import { Flight } from "./flight.js";

export async function runIdempotency(env: Environment): Promise<ScenarioReport> {
  const { settings } = env;
  const started = Date.now();
  const planned = settings.faults ?? (settings.quick ? 2 : 4);
  const stale = settings.staleAfterMs;
  const report = emptyReport(
    "idempotency",
    env.store,
    `${settings.racers} processes × 4 calls in flight on the same keys (≥ ${settings.keys}), operations of 50-250 ms, staleAfter ${stale} ms, ${planned} faults alternating SIGKILL (replaced) and SIGSTOP past staleAfter then SIGCONT, ledger fsync ${settings.fsync ? "on" : "off"}`,
  );
  const flight = new Flight(env.ledgerDir);
  const config = (startAt: number | null): RacerConfig => ({
    ...env.childBase(),
    staleAfterMs: stale,
    keys: settings.keys,
    inFlight: 4,
    startAt,
    workMs: [50, 250],
    giveUpMs: 4 * stale + 60_000,
  });
  const spawn = async (startAt: number | null) => {
    const r = env.processes.spawn("racer", "racer.ts", config(startAt));
    await r.waitFor("ready", 90_000);
    return r;
  };
  const racers = await Promise.all(Array.from({ length: settings.racers }, () => spawn(null)));
  const go = Date.now() + 200;
  for (const r of racers) r.send({ go });

  const faults: Record<string, number> = {};
  for (let i = 0; i < planned; i++) {
    await pause(env.random.between(settings.gapMs[0], settings.gapMs[1]));
    const { racer, key } = await until(
      () => {
        const busy = env.processes.alive("racer").flatMap((racer) => flight.of(racer.pid).map((f) => ({ racer, key: f.item })));
        return busy.length ? env.random.pick(busy) : undefined;
      },
      "a racer running an operation",
      30_000,
      10,
    );
    if (i % 2 === 0) {
      const at = Date.now();
      await racer.kill();
      env.controller.append("fault.kill", { target: racer.pid, at, dead: Date.now(), key });
      await spawn(Date.now());
      faults.kills = (faults.kills ?? 0) + 1;
    } else {
      await racer.freeze();
      const frozenAt = Date.now();
      env.controller.append("fault.freeze", { target: racer.pid, key });
      // Frozen until another process took its key over (its claim went stale), or three staleAfters.
      await until(() => flight.startsOf(key).some((s) => s.pid !== racer.pid && s.t >= frozenAt), `key ${key} to be taken over`, 3 * stale + 30_000, 50).catch((error: unknown) =>
        report.notes.push(String(error)),
      );
      racer.thaw();
      env.controller.append("fault.thaw", { target: racer.pid });
      faults.freezes = (faults.freezes ?? 0) + 1;
    }
  }
  for (const r of env.processes.alive("racer")) r.send({ stop: true });
  try {
    await until(() => env.processes.alive("racer").every((r) => r.said("done")), "every racer to finish its keys", 4 * stale + 120_000, 100);
  } catch (error) {
    report.error = String(error);
  }
  for (const dead of env.processes.diedOnTheirOwn()) report.failures.push(dead.deathNote());
  env.controller.append("teardown");
  await env.processes.killAll();

  const { records, faults: torn } = readLedgers(env.ledgerDir);
  for (const t of torn) report.failures.push(`ledger fault in ${t.file} line ${t.line}: ${t.text}`);
  const v = judgeKeys(records, stale);
  report.items = `${v.keys.toLocaleString("en-US")} keys, ${v.calls.toLocaleString("en-US")} answered calls`;
  report.faults = faults;
  recordVerdict(report, v);
  report.durationMs = Date.now() - started;
  return report;
}
