/**
 * Flows, batches and dedupe modes raced across processes under SIGKILL: composer processes write
 * flows, batches and keyed enqueues (every dedupe mode, the same few keys in every composer) while
 * worker processes run them; in turn a busy worker or a composer in the middle of its calls is
 * SIGKILLed and replaced. Then every job is driven to its end and judged: none lost (acknowledged or
 * only in the tables), no parent started before its children ended, one live job per dedupe key, no
 * raw error, no deadlock.
 */
import { readLedgers } from "../ledger.js";
import { emptyReport, recordVerdict, type ScenarioReport } from "../report.js";
import { flowFailures, judgeFlows, type FlowFinal } from "../verdict/flows.js";
import { judgeJobs } from "../verdict/jobs.js";
import { pause, until } from "../wait.js";
import type { ComposerConfig } from "../processes/composer.js";
import { FLOW_QUEUES } from "../processes/flow-queues.js";
import type { Environment } from "./environment.js";
import { Flight } from "./flight.js";
import { listJobs, workerConfig } from "./queue-run.js";

const QUEUES = Object.values(FLOW_QUEUES);

async function listFinals(env: Environment): Promise<FlowFinal[]> {
  const jobs = (await Promise.all(QUEUES.map((queue) => listJobs(env, queue)))).flat();
  return jobs.map((j) => ({ id: j.id, status: j.status, attempts: j.attempts, queue: j.queue, parentId: j.parentId, key: j.key, createdAt: j.createdAt }));
}

export async function runFlows(env: Environment): Promise<ScenarioReport> {
  const { settings } = env;
  const started = Date.now();
  const planned = settings.faults ?? (settings.quick ? 4 : 10);
  const composers = settings.quick ? 2 : 3;
  const debounceMs = 200;
  const throttleMs = 300;
  const report = emptyReport(
    "flows",
    env.store,
    `${composers} composers racing flows (7 jobs), batches (4-8 items) and keyed enqueues (skip, replace, debounce ${debounceMs} ms, throttle ${throttleMs} ms, 4 keys each), ` +
      `${settings.workers} workers × concurrency ${settings.concurrency}, lease ${settings.leaseMs} ms, rescue every ${settings.rescueMs} ms, ${planned} × SIGKILL of a busy worker (every third of a composer), replaced at once`,
  );
  const flight = new Flight(env.ledgerDir);
  const config = workerConfig(env, { flows: true });
  const composerConfig: ComposerConfig = { ...env.childBase(), keysPerMode: 4, debounceMs, throttleMs };
  const spawnWorker = async () => env.processes.spawn("worker", "worker.ts", config).waitFor("ready", 90_000);
  const spawnComposer = async () => env.processes.spawn("composer", "composer.ts", composerConfig).waitFor("ready", 90_000);
  await Promise.all(Array.from({ length: settings.workers }, spawnWorker));
  await Promise.all(Array.from({ length: composers }, spawnComposer));
  await until(() => flight.count("ack") >= 20, "the composers' first 20 calls", 60_000, 50);

  const faults: Record<string, number> = {};
  for (let i = 0; i < planned; i++) {
    await pause(env.random.between(settings.gapMs[0], settings.gapMs[1]));
    if (i % 3 === 2) {
      // A composer dies between (or inside) its calls: a flow or batch it was writing is all there or absent.
      const composer = env.random.pick(env.processes.alive("composer"));
      const at = Date.now();
      await composer.kill();
      env.controller.append("fault.kill", { target: composer.pid, at, dead: Date.now() });
      await spawnComposer();
      faults.composerKills = (faults.composerKills ?? 0) + 1;
    } else {
      const { worker } = await until(
        () => {
          const busy = env.processes.alive("worker").filter((w) => flight.of(w.pid).length > 0);
          return busy.length ? { worker: env.random.pick(busy) } : undefined;
        },
        "a worker with a job in flight",
        30_000,
        20,
      );
      const at = Date.now();
      await worker.kill();
      env.controller.append("fault.kill", { target: worker.pid, at, dead: Date.now() });
      await spawnWorker();
      faults.workerKills = (faults.workerKills ?? 0) + 1;
    }
  }
  for (const c of env.processes.alive("composer")) c.send({ stop: true });
  await Promise.all(env.processes.alive("composer").map((c) => c.waitFor("done", 120_000)));

  // Every job to its end, parents included: nothing pending or running in any of the queues.
  try {
    await until(
      async () => {
        const rows = await env.observer.jobs.counts();
        return rows.filter((r) => QUEUES.includes(r.queue as (typeof QUEUES)[number])).every((r) => r.counts.pending === 0 && r.counts.running === 0);
      },
      "every job to finish",
      120_000 + 4 * (settings.leaseMs + settings.rescueMs),
      250,
    );
  } catch (error) {
    report.error = String(error);
  }
  for (const dead of env.processes.diedOnTheirOwn().filter((p) => !p.killedByUs)) report.failures.push(dead.deathNote());
  env.controller.append("teardown");
  await env.processes.killAll();

  const { records, faults: torn } = readLedgers(env.ledgerDir);
  for (const t of torn) report.failures.push(`ledger fault in ${t.file} line ${t.line}: ${t.text}`);
  const finals = await listFinals(env);
  const jobs = judgeJobs(records, finals, { leaseMs: settings.leaseMs, rescueMs: settings.rescueMs });
  const flows = judgeFlows(records, finals, { throttleMs });
  const calls = records.filter((r) => r.k === "ack");
  const kinds = (kind: string) => calls.filter((r) => r.kind === kind).length;
  report.items =
    `${kinds("flow")} flows, ${kinds("batch")} batches, ${kinds("keyed")} keyed enqueues on ${flows.keys} keys; ` +
    `${jobs.acked.toLocaleString("en-US")} jobs acknowledged (${jobs.inTable.toLocaleString("en-US")} in the tables, ${flows.parents} parents), ${jobs.executions.toLocaleString("en-US")} executions`;
  report.faults = faults;
  recordVerdict(report, jobs);
  report.failures.push(...flowFailures(flows));
  report.notes.push(`0 parents early, 0 dedupe breaches, 0 raw errors and 0 deadlocks are required: found ${flows.earlyParents.length}, ${flows.dedupe.length}, ${flows.rawErrors.length}, ${flows.deadlocks.length}`);
  if (flows.typedErrors) report.notes.push(`${flows.typedErrors} call(s) answered with a TickworkError (not retried)`);
  report.durationMs = Date.now() - started;
  return report;
}
