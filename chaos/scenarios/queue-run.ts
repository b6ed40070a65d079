/**
 * The skeleton of the queue scenarios: worker processes and a producer on the scenario's database,
 * faults injected one after another while a backlog waits, then every job driven to its end and
 * judged against the ledger. Each queue scenario supplies only its fault (`QueueFault`).
 */
import type { Job } from "../../src/index.js";
import type { ChaosProcess } from "../children.js";
import { readLedgers } from "../ledger.js";
import { emptyReport, recordVerdict, type ScenarioReport } from "../report.js";
import { judgeJobs, type FinalJob } from "../verdict/jobs.js";
import { pause, until } from "../wait.js";
import type { WorkerConfig } from "../processes/worker.js";
import type { ProducerConfig } from "../processes/producer.js";
import type { Environment } from "./environment.js";
import { Flight } from "./flight.js";

export interface QueueControl {
  env: Environment;
  flight: Flight;
  workers(): ChaosProcess[];
  /** Starts a worker and waits until it runs. */
  spawnWorker(): Promise<ChaosProcess>;
  /** Pending jobs now (the backlog), as the observer reads it. */
  pending(): Promise<number>;
  /** A worker with at least one execution in flight (waits for one, up to 30 s). */
  busyWorker(): Promise<{ worker: ChaosProcess; inFlight: ReturnType<Flight["of"]> }>;
  /** Records a fault in the controller's ledger. */
  record(kind: string, fields?: Record<string, unknown>): void;
}

export interface QueueFault {
  /** Faults in full and quick mode unless `--faults` says otherwise. */
  planned: { full: number; quick: number };
  /** One line for the report: what is done to the system. */
  describe(env: Environment): string;
  /** Workers share one small pool with an application that can hog it (the pool scenario). */
  sharedPool?: boolean;
  /** Injects fault number `i`; returns the fault's kind for the counts ("kills", "restarts"...). */
  inject(ctl: QueueControl, i: number): Promise<string>;
}

/** Every job of `queue` as the observer reads it at the end, page by page. */
export async function listJobs(env: Environment, queue: string): Promise<Job[]> {
  const jobs: Job[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await until(() => env.observer.jobs.list({ queue, limit: 500, ...(before ? { before } : {}) }), "a page of jobs", 60_000);
    jobs.push(...page);
    if (page.length < 500) return jobs;
    before = page[page.length - 1]!.id;
  }
}

/** A worker process's config for the scenario's settings (`extra`: what a scenario sets beyond them). */
export function workerConfig(env: Environment, extra: Partial<WorkerConfig> = {}): WorkerConfig {
  const { settings } = env;
  return {
    ...env.childBase(),
    leaseMs: settings.leaseMs,
    rescueMs: settings.rescueMs,
    pollMs: env.store === "sqlite" ? settings.sqlitePollMs : 2_000,
    concurrency: settings.concurrency,
    workMs: settings.workMs,
    poolMax: settings.poolMax,
    sharedPool: false,
    ...extra,
  };
}

export async function runQueueScenario(env: Environment, fault: QueueFault): Promise<ScenarioReport> {
  const { settings } = env;
  const started = Date.now();
  const planned = settings.faults ?? (settings.quick ? fault.planned.quick : fault.planned.full);
  const report = emptyReport(
    env.scenario,
    env.store,
    `${settings.workers} workers × concurrency ${settings.concurrency}, lease ${settings.leaseMs} ms, rescue every ${settings.rescueMs} ms, work ${settings.workMs[0]}-${settings.workMs[1]} ms/job, ` +
      `${settings.jobs} jobs then a backlog kept ≥ ${settings.keepBacklog / 2}, ${planned} × ${fault.describe(env)}${env.store === "sqlite" ? `, poll ${settings.sqlitePollMs} ms` : ""}, ledger fsync ${settings.fsync ? "on" : "off"}`,
  );
  const flight = new Flight(env.ledgerDir);
  const config = workerConfig(env, { sharedPool: fault.sharedPool === true });
  const counts = async () => {
    const [row] = await env.observer.jobs.counts("chaos");
    return row?.counts ?? { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  };
  const ctl: QueueControl = {
    env,
    flight,
    workers: () => env.processes.alive("worker"),
    async spawnWorker() {
      const w = env.processes.spawn("worker", "worker.ts", config);
      await w.waitFor("ready", 90_000);
      return w;
    },
    pending: async () => (await counts()).pending,
    async busyWorker() {
      return until(
        () => {
          const busy = ctl.workers().map((worker) => ({ worker, inFlight: flight.of(worker.pid) })).filter((b) => b.inFlight.length > 0);
          return busy.length ? env.random.pick(busy) : undefined;
        },
        "a worker with a job in flight",
        30_000,
        20,
      );
    },
    record: (kind, fields = {}) => env.controller.append(kind, fields),
  };

  await Promise.all(Array.from({ length: settings.workers }, () => ctl.spawnWorker()));
  const producerConfig: ProducerConfig = { ...env.childBase(), jobs: settings.jobs, keepBacklog: settings.keepBacklog, rate: settings.rate };
  const producer = env.processes.spawn("producer", "producer.ts", producerConfig);
  await producer.waitFor("ready", 90_000);
  // The faults start under a backlog: jobs waiting beyond what the workers hold.
  const backlog = Math.min(settings.keepBacklog / 2, settings.jobs / 2);
  await until(async () => (await ctl.pending()) >= backlog, `a backlog of ${backlog} pending jobs`, 120_000);
  const elapsed = () => `+${((Date.now() - started) / 1000).toFixed(1)} s`;
  env.log(`  ${elapsed()} workers running, backlog of ${backlog}+ pending jobs`);

  const faults: Record<string, number> = {};
  const backlogAtFault: number[] = [];
  for (let i = 0; i < planned; i++) {
    await pause(env.random.between(settings.gapMs[0], settings.gapMs[1]));
    backlogAtFault.push(await ctl.pending().catch(() => Number.NaN));
    const kind = await fault.inject(ctl, i);
    faults[kind] = (faults[kind] ?? 0) + 1;
    env.log(`  ${elapsed()} fault ${i + 1}/${planned} (${kind}) done, backlog was ${backlogAtFault[i]}`);
    // A worker that died on its own is replaced (and reported): the run goes on.
    for (const dead of env.processes.diedOnTheirOwn().filter((p) => p.role === "worker" && !p.killedByUs)) {
      dead.killedByUs = true;
      report.failures.push(dead.deathNote());
      await ctl.spawnWorker();
    }
  }
  producer.send({ stop: true });
  const said = await producer.waitFor("done", 120_000);

  // Every job to its end: nothing pending or running any more.
  const drainMs = 120_000 + 4 * (settings.leaseMs + settings.rescueMs) + Number(said.acked ?? 0) * 20;
  try {
    await until(async () => {
      const c = await counts();
      return c.pending === 0 && c.running === 0;
    }, "every job to finish", drainMs, 250);
  } catch (error) {
    report.error = String(error);
  }
  env.log(`  ${elapsed()} every job finished`);
  for (const dead of env.processes.diedOnTheirOwn().filter((p) => !p.killedByUs)) {
    report.failures.push(dead.deathNote());
  }
  env.controller.append("teardown");
  await env.processes.killAll();
  for (const r of readLedgers(env.ledgerDir).records.filter((r) => r.k === "note")) report.notes.push(String(r.text));

  const { records, faults: torn } = readLedgers(env.ledgerDir);
  for (const t of torn) report.failures.push(`ledger fault in ${t.file} line ${t.line}: ${t.text}`);
  const finals: FinalJob[] = (await listJobs(env, "chaos")).map((j) => ({ id: j.id, status: j.status, attempts: j.attempts }));
  const v = judgeJobs(records, finals, { leaseMs: settings.leaseMs, rescueMs: settings.rescueMs });
  report.items = `${v.acked.toLocaleString("en-US")} jobs acknowledged (${v.inTable.toLocaleString("en-US")} in the table), ${v.executions.toLocaleString("en-US")} executions`;
  report.faults = faults;
  recordVerdict(report, v);
  const finite = backlogAtFault.filter(Number.isFinite);
  if (finite.length) report.notes.push(`backlog when each fault began: ${Math.min(...finite)}-${Math.max(...finite)} pending jobs`);
  const failedCalls = Number(said.failedCalls ?? 0);
  if (failedCalls) report.notes.push(`${failedCalls} enqueueMany call(s) failed and were retried by the producer`);
  report.durationMs = Date.now() - started;
  return report;
}
