/**
 * The workloads, written once and driven through each system's primitives (`adapter.ts`), so
 * graphile-worker, pg-boss, BullMQ and tickwork are timed by the same lines of code:
 * 1. bulk enqueue: N jobs through the system's bulk API, `batch` per call, one call after another;
 * 2. run N: N jobs enqueued first (not timed), then timed from the call that starts the workers to
 *    the last job the system recorded completed (and, for reference, to the last handler call);
 * 3. latency: single jobs on an idle worker, one at a time, enqueue call to handler start;
 * 4. sustained: a producer at a fixed rate of single enqueues while the workers run them;
 * 5. round trip: a producer awaits each job's result, computed by a worker in another process;
 * 6. producer: a producer at a fixed rate, with the worker in another process;
 * 7. scale-out: N jobs enqueued first, then run by 1, 2 or 4 worker processes started at once.
 * Every measurement opens a fresh namespace and removes it after, even when it throws.
 */
import { deferred, now, payloadBody, quantile, sleep } from "../support.js";
import { cpuMeter } from "./cpu.js";
import { openRoundTrip, openScaleOut, wallClock, type WorkerReport } from "./round-trip.js";
import type { Adapter, Counts, Instance, LatencyFigures, OnJob, OpenOptions, Payload, RunFigures, ScaleFigures, SustainedFigures, System } from "./adapter.js";

/** Warnings and errors the systems reported, by "system: what", so a figure that hid one is not taken as clean. */
export const problems = new Map<string, number>();

export function reportProblem(systemId: string, what: string): void {
  const key = `${systemId}: ${what}`;
  problems.set(key, (problems.get(key) ?? 0) + 1);
}

/** Resolves true when `promise` settles first, false after `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every `everyMs` until it holds (true) or `ms` have passed (false). */
async function holdsWithin(ms: number, check: () => Promise<boolean> | boolean, everyMs = 1): Promise<boolean> {
  const deadline = now() + ms;
  while (!(await check())) {
    if (now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}

/** Polls `check` every millisecond until it holds; throws after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  if (!(await holdsWithin(ms, check))) throw new Error(`${what} did not happen within ${ms / 1000} s`);
}

function payloads(from: number, count: number, bytes: number): Payload[] {
  const body = payloadBody(bytes);
  return Array.from({ length: count }, (_, i) => (body === undefined ? { n: from + i, t: 0 } : { n: from + i, t: 0, body }));
}

async function enqueueAll(target: Pick<Instance, "enqueueBatch">, jobs: number, batch: number, bytes: number): Promise<void> {
  for (let i = 0; i < jobs; i += batch) await target.enqueueBatch(payloads(i, Math.min(batch, jobs - i), bytes));
}

/**
 * The end of a run whose handler calls all happened: waits until the system records no job unfinished
 * (the run's time stops there; returned as now()), then, after a pause in which a job run twice would
 * show up, checks that the handler ran once per job, and that the system recorded every job completed
 * and none failed.
 */
async function settle(counts: Counts, jobs: number, handlerCalls: () => number | Promise<number>): Promise<number> {
  await until(`the last of ${jobs} jobs to be recorded completed`, 60_000, async () => (await counts.unfinished()) === 0);
  const tSettled = now();
  await sleep(20); // a job run twice would show up here
  const calls = await handlerCalls();
  const [completed, failed] = [await counts.completed(), await counts.failed()];
  if (calls !== jobs) throw new Error(`the handler ran ${calls} times for ${jobs} jobs`);
  if (completed !== jobs) throw new Error(`expected ${jobs} completed jobs, the system recorded ${completed}`);
  if (failed !== 0) throw new Error(`${failed} failed attempts recorded for no-op jobs`);
  return tSettled;
}

/**
 * The handler calls of several worker processes, checked job by job: each job number one of the
 * `jobs` enqueued (0 to jobs - 1) and run by one process at most once. Returns how many calls they
 * made, for settle's count (which catches a job that never ran).
 */
function ranAtMostOnce(reports: WorkerReport[], jobs: number): number {
  const seen = new Uint8Array(jobs);
  let calls = 0;
  for (const { ran } of reports) {
    for (const n of ran) {
      calls++;
      if (!Number.isInteger(n) || n < 0 || n >= jobs) throw new Error(`a worker process ran job ${n}, not one of the ${jobs} enqueued`);
      if (seen[n] === 1) throw new Error(`job ${n} ran more than once`);
      seen[n] = 1;
    }
  }
  return calls;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

const LATENCY_WARMUP = { samples: 20, ms: 2_000 };
/** Enqueue calls a sustained producer may have outstanding; past it, the producer is behind and says so. */
const MAX_IN_FLIGHT = 100;

/** What a producer at a fixed rate did (see produceAtRate). */
interface Produced {
  offered: number;
  issued: number;
  /** Enqueue calls that returned, and those that returned before the window closed. */
  acked: number;
  ackedInWindow: number;
  /** How long each enqueue call took (ms). */
  callMs: number[];
  /** When the window closed (now()). */
  tEnd: number;
}

/**
 * Issues single enqueues at `rate` per second for `seconds`, each call when due and not awaited one by
 * one, as a server handling many requests at once would. At most MAX_IN_FLIGHT calls are outstanding
 * (100 concurrent requests): a system whose enqueues are slower than that falls behind, which shows as
 * an enqueue rate below the target, instead of piling thousands of queries into its pool's queue in
 * front of its own workers' claims. `atWindowEnd` runs the moment the window closes; the promise
 * resolves once every call returned.
 */
async function produceAtRate(rate: number, seconds: number, enqueue: (n: number) => Promise<void>, atWindowEnd: () => void): Promise<Produced> {
  const offered = Math.round(rate * seconds);
  const callMs: number[] = [];
  let issued = 0;
  let inFlight = 0;
  let ackedInWindow = 0;
  let acked = 0;
  let enqueueError: unknown;
  const tStart = now();
  const windowEnd = tStart + seconds * 1000;
  for (let t = now(); t < windowEnd; t = now()) {
    const due = Math.min(offered, Math.floor(((t - tStart) * rate) / 1000));
    while (issued < due && inFlight < MAX_IN_FLIGHT) {
      inFlight++;
      const t0 = now();
      enqueue(issued++).then(
        () => {
          const t1 = now();
          inFlight--;
          acked++;
          callMs.push(t1 - t0);
          if (t1 <= windowEnd) ackedInWindow++;
        },
        (error: unknown) => {
          inFlight--;
          enqueueError ??= error;
        },
      );
    }
    if (enqueueError) throw enqueueError;
    await sleep(1);
  }
  const tEnd = now();
  atWindowEnd();
  await until("the producer's last enqueue calls to return", 60_000, () => inFlight === 0);
  if (enqueueError) throw enqueueError;
  return { offered, issued, acked, ackedInWindow, callMs, tEnd };
}

/** The figures of a run that hit its time budget: the rate of the `ran` jobs that ran in `elapsedMs`. */
function partialRun(ran: number, jobs: number, elapsedMs: number): Omit<RunFigures, "startMs"> {
  const rate = (ran / elapsedMs) * 1000;
  return { jobsPerSec: rate, toLastHandler: rate, partial: { ran, of: jobs, seconds: elapsedMs / 1000 } };
}

/** The figures of a sustained producer's run, from what it did and what the workers started. */
function sustainedFigures({ rate, seconds, produced, startedAtEnd, started, drainMs, latencies }: {
  rate: number;
  seconds: number;
  produced: Pick<Produced, "offered" | "issued" | "acked" | "ackedInWindow">;
  startedAtEnd: number;
  started: number;
  drainMs: number | null;
  latencies: number[];
}): SustainedFigures {
  const enqueueRate = produced.ackedInWindow / seconds;
  const backlogAtEnd = produced.issued - startedAtEnd;
  return {
    offered: produced.offered,
    enqueued: produced.acked,
    enqueueRate,
    startRate: startedAtEnd / seconds,
    backlogAtEnd,
    backlogAfterDrain: produced.acked - started,
    drainMs,
    keptUp: enqueueRate >= 0.98 * rate && backlogAtEnd <= rate,
    p50: quantile(latencies, 0.5),
    p95: quantile(latencies, 0.95),
    p99: quantile(latencies, 0.99),
    max: Math.max(...latencies),
  };
}

export function adapterFor(system: System): Adapter {
  const setup = (options: OpenOptions) => system.open(options);

  async function teardown(instance: Instance): Promise<void> {
    try {
      await instance.stopWorkers();
    } finally {
      await instance.dispose();
    }
  }

  async function onFresh<T>(options: OpenOptions, fn: (instance: Instance) => Promise<T>): Promise<T> {
    const instance = await setup(options);
    try {
      return await fn(instance);
    } finally {
      await teardown(instance);
    }
  }

  return {
    system,
    setup,
    teardown,

    bulkEnqueue(jobs, batch, bytes = 0) {
      return onFresh({ concurrency: 1, onJob: () => {} }, async (instance) => {
        const batches = Array.from({ length: Math.ceil(jobs / batch) }, (_, b) => payloads(b * batch, Math.min(batch, jobs - b * batch), bytes));
        const cpu = await cpuMeter(system.backend);
        const t0 = now();
        for (const b of batches) await instance.enqueueBatch(b);
        const elapsed = now() - t0;
        const perJob = cpu(jobs);
        const waiting = await instance.unfinished();
        if (waiting !== jobs) throw new Error(`expected ${jobs} waiting jobs after the bulk enqueue, found ${waiting}`);
        return { jobsPerSec: (jobs / elapsed) * 1000, cpu: perJob };
      });
    },

    runN(jobs, concurrency, budgetMs, { bytes = 0, handlerMs = 0 } = {}) {
      let calls = 0;
      let tLast = 0;
      const last = deferred<void>();
      const count = () => {
        if (++calls === jobs) {
          tLast = now();
          last.resolve();
        }
      };
      const onJob: OnJob = handlerMs
        ? (): Promise<void> => {
            count();
            return sleep(handlerMs);
          }
        : count;
      return onFresh({ concurrency, onJob }, async (instance): Promise<RunFigures> => {
        await enqueueAll(instance, jobs, 1_000, bytes);
        const cpu = await cpuMeter(system.backend);
        const t0 = now();
        await instance.startWorkers();
        const startMs = now() - t0;
        if (!(await settlesWithin(last.promise, budgetMs - startMs))) {
          // Too slow to finish in the budget (pg-boss at its defaults polls once per 2 s per worker):
          // the rate is what ran in the budget, and the row says it is partial.
          return { ...partialRun(calls, jobs, now() - t0), startMs };
        }
        const tSettled = await settle(instance, jobs, () => calls);
        // Read after settle's checks: their few queries are in it, against 20,000 jobs' worth of work.
        return { jobsPerSec: (jobs / (tSettled - t0)) * 1000, toLastHandler: (jobs / (tLast - t0)) * 1000, startMs, cpu: cpu(jobs) };
      });
    },

    latency(samples, budgetMs) {
      let waiting: { n: number; resolve: (t: number) => void } | undefined;
      const onJob = (payload: Payload) => {
        const t = now();
        if (waiting && payload.n === waiting.n) waiting.resolve(t);
      };
      return onFresh({ concurrency: 10, onJob }, async (instance): Promise<LatencyFigures> => {
        await instance.startWorkers();
        await sleep(50);
        const one = async (n: number): Promise<number> => {
          const started = deferred<number>();
          waiting = { n, resolve: started.resolve };
          const t0 = now();
          await instance.enqueue({ n, t: t0 });
          if (!(await settlesWithin(started.promise, 15_000))) throw new Error(`job ${n} did not start within 15 s`);
          const t1 = await started.promise;
          await sleep(2 + (Math.abs(n) % 3)); // idle gaps of 2-4 ms, so wake-ups don't fall into step with a timer
          return t1 - t0;
        };
        const warmupEnd = now() + LATENCY_WARMUP.ms;
        for (let i = 1; i <= LATENCY_WARMUP.samples && now() < warmupEnd; i++) await one(-i);
        const latencies: number[] = [];
        const deadline = now() + budgetMs;
        for (let i = 0; i < samples && now() < deadline; i++) latencies.push(await one(i));
        return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99), max: Math.max(...latencies), samples: latencies.length };
      });
    },

    async roundTrip(samples, concurrency, budgetMs) {
      if (!system.workerProcess) throw new Error(`${system.id} cannot await a job's result`);
      const trip = await openRoundTrip(system.workerProcess, concurrency);
      try {
        const timed = async (n: number) => {
          const t0 = now();
          await trip.call(n);
          return now() - t0;
        };
        const warmupEnd = now() + LATENCY_WARMUP.ms;
        for (let i = 1; i <= LATENCY_WARMUP.samples && now() < warmupEnd; i++) await timed(-i);
        const latencies: number[] = [];
        const deadline = now() + budgetMs;
        for (let i = 0; i < samples && now() < deadline; i++) {
          latencies.push(await timed(i));
          await sleep(2 + (i % 3)); // idle gaps of 2-4 ms, as in the latency workload
        }
        return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99), max: Math.max(...latencies), samples: latencies.length };
      } finally {
        await trip.close();
      }
    },

    async producer({ rate, seconds, concurrency, drainBudgetMs }) {
      if (!system.workerProcess) throw new Error(`${system.id} has no worker process of its own in this harness`);
      const trip = await openRoundTrip(system.workerProcess, concurrency);
      try {
        // Warm-up: jobs the worker process records like the others, all started before the
        // measured ones are enqueued, so they are the first `warm` of its records.
        for (let i = 1; i <= LATENCY_WARMUP.samples; i++) await trip.enqueue({ n: -i, at: wallClock() });
        await until("the warm-up jobs to start", 15_000, () => trip.started() >= LATENCY_WARMUP.samples);
        const warm = (await trip.latencies()).length;
        const started = () => trip.started() - warm;
        let startedAtEnd = 0;
        const cpu = await cpuMeter(system.backend, trip.pids());
        const { offered, issued, acked, ackedInWindow, callMs, tEnd } = await produceAtRate(rate, seconds, (n) => trip.enqueue({ n, at: wallClock() }), () => (startedAtEnd = started()));
        while (started() < acked && now() - tEnd < drainBudgetMs) await sleep(5);
        const perJob = cpu(acked);
        const latencies = (await trip.latencies()).slice(warm);
        const drainMs = latencies.length >= acked ? now() - tEnd : null;
        if (latencies.length > acked) throw new Error(`${latencies.length} handler starts for ${acked} enqueued jobs`);
        return {
          ...sustainedFigures({ rate, seconds, produced: { offered, issued, acked, ackedInWindow }, startedAtEnd, started: latencies.length, drainMs, latencies }),
          callP50: quantile(callMs, 0.5),
          callP99: quantile(callMs, 0.99),
          cpu: perJob,
        };
      } finally {
        await trip.close();
      }
    },

    async scaleOut({ jobs, processes, concurrency, budgetMs }): Promise<ScaleFigures> {
      if (!system.workerProcess) throw new Error(`${system.id} has no worker process of its own in this harness`);
      const scale = await openScaleOut(system.workerProcess, processes, concurrency);
      try {
        await enqueueAll(scale, jobs, 1_000, 0);
        const waiting = await scale.unfinished();
        if (waiting !== jobs) throw new Error(`expected ${jobs} waiting jobs before the workers start, found ${waiting}`);
        // Every process has its worker configured and idle; the time runs from the messages that start
        // them all (each system's start call is inside it, as in runN).
        const cpu = await cpuMeter(system.backend, scale.pids());
        const [t0, wall0] = [now(), wallClock()];
        await scale.start();
        const startMs = now() - t0;
        // The processes say their handler calls every 20 ms at most: a local count, polled every 5 ms
        // (no query competes with the workers for the CPU until every job ran).
        if (!(await holdsWithin(budgetMs - startMs, () => sum(scale.calls()) >= jobs, 5))) {
          const perProcess = scale.calls();
          return { ...partialRun(sum(perProcess), jobs, now() - t0), startMs, processes, perProcess };
        }
        // Asked once the system settled, after settle's pause: every call the processes made by then.
        let reports: WorkerReport[] = [];
        const handlerCalls = async () => {
          reports = await scale.reports();
          return ranAtMostOnce(reports, jobs);
        };
        const tSettled = await settle(scale, jobs, handlerCalls);
        const perJob = cpu(jobs);
        // Each process's last handler call, on the machine's wall clock.
        const tLast = Math.max(...reports.map((r) => r.lastCall));
        return { jobsPerSec: (jobs / (tSettled - t0)) * 1000, toLastHandler: (jobs / (tLast - wall0)) * 1000, startMs, processes, perProcess: reports.map((r) => r.ran.length), cpu: perJob };
      } finally {
        await scale.close();
      }
    },

    sustained({ rate, seconds, concurrency, drainBudgetMs }) {
      const latencies: number[] = [];
      let started = 0;
      const onJob = (payload: Payload) => {
        latencies.push(now() - payload.t);
        started++;
      };
      return onFresh({ concurrency, onJob }, async (instance): Promise<SustainedFigures> => {
        await instance.startWorkers();
        await sleep(50);
        let startedAtEnd = 0;
        const { offered, issued, acked, ackedInWindow, tEnd } = await produceAtRate(rate, seconds, (n) => instance.enqueue({ n, t: now() }), () => (startedAtEnd = started));
        while (started < acked && now() - tEnd < drainBudgetMs) await sleep(1);
        const drainMs = started >= acked ? now() - tEnd : null;
        if (started > acked) throw new Error(`${started} handler starts for ${acked} enqueued jobs`);
        return sustainedFigures({ rate, seconds, produced: { offered, issued, acked, ackedInWindow }, startedAtEnd, started, drainMs, latencies });
      });
    },
  };
}
