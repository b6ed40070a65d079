/**
 * The workloads, written once and driven through each system's primitives (`adapter.ts`), so
 * graphile-worker, pg-boss, BullMQ and tickwork are timed by the same lines of code:
 * 1. bulk enqueue: N jobs through the system's bulk API, `batch` per call, one call after another;
 * 2. run N: N jobs enqueued first (not timed), then timed from the call that starts the workers to
 *    the last job the system recorded completed (and, for reference, to the last handler call);
 * 3. latency: single jobs on an idle worker, one at a time, enqueue call to handler start;
 * 4. sustained: a producer at a fixed rate of single enqueues while the workers run them;
 * 5. round trip: a producer awaits each job's result, computed by a worker in another process.
 * Every measurement opens a fresh namespace and removes it after, even when it throws.
 */
import { deferred, now, payloadBody, quantile, sleep } from "../support.js";
import { openRoundTrip, wallClock } from "./round-trip.js";
import type { Adapter, Instance, LatencyFigures, OpenOptions, Payload, RunFigures, SustainedFigures, System } from "./adapter.js";

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

/** Polls `check` every millisecond until it holds; throws after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = now() + ms;
  while (!(await check())) {
    if (now() > deadline) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await sleep(1);
  }
}

function payloads(from: number, count: number, bytes: number): Payload[] {
  const body = payloadBody(bytes);
  return Array.from({ length: count }, (_, i) => (body === undefined ? { n: from + i, t: 0 } : { n: from + i, t: 0, body }));
}

async function enqueueAll(instance: Instance, jobs: number, batch: number, bytes: number): Promise<void> {
  for (let i = 0; i < jobs; i += batch) await instance.enqueueBatch(payloads(i, Math.min(batch, jobs - i), bytes));
}

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
        const t0 = now();
        for (const b of batches) await instance.enqueueBatch(b);
        const elapsed = now() - t0;
        const waiting = await instance.unfinished();
        if (waiting !== jobs) throw new Error(`expected ${jobs} waiting jobs after the bulk enqueue, found ${waiting}`);
        return { jobsPerSec: (jobs / elapsed) * 1000 };
      });
    },

    runN(jobs, concurrency, budgetMs, bytes = 0) {
      let calls = 0;
      let tLast = 0;
      const last = deferred<void>();
      const onJob = () => {
        if (++calls === jobs) {
          tLast = now();
          last.resolve();
        }
      };
      return onFresh({ concurrency, onJob }, async (instance): Promise<RunFigures> => {
        await enqueueAll(instance, jobs, 1_000, bytes);
        const t0 = now();
        await instance.startWorkers();
        const startMs = now() - t0;
        if (!(await settlesWithin(last.promise, budgetMs - startMs))) {
          // Too slow to finish in the budget (pg-boss at its defaults polls once per 2 s per worker):
          // the rate is what ran in the budget, and the row says it is partial.
          const elapsed = now() - t0;
          const ran = calls;
          return { jobsPerSec: (ran / elapsed) * 1000, toLastHandler: (ran / elapsed) * 1000, startMs, partial: { ran, of: jobs, seconds: elapsed / 1000 } };
        }
        await until(`the last of ${jobs} jobs to be recorded completed`, 60_000, async () => (await instance.unfinished()) === 0);
        const tSettled = now();
        await sleep(20); // a job run twice would show up here
        const [completed, failed] = [await instance.completed(), await instance.failed()];
        if (calls !== jobs) throw new Error(`the handler ran ${calls} times for ${jobs} jobs`);
        if (completed !== jobs) throw new Error(`expected ${jobs} completed jobs, the system recorded ${completed}`);
        if (failed !== 0) throw new Error(`${failed} failed attempts recorded for no-op jobs`);
        return { jobsPerSec: (jobs / (tSettled - t0)) * 1000, toLastHandler: (jobs / (tLast - t0)) * 1000, startMs };
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
        const { offered, issued, acked, ackedInWindow, callMs, tEnd } = await produceAtRate(rate, seconds, (n) => trip.enqueue({ n, at: wallClock() }), () => (startedAtEnd = started()));
        while (started() < acked && now() - tEnd < drainBudgetMs) await sleep(5);
        const latencies = (await trip.latencies()).slice(warm);
        const drainMs = latencies.length >= acked ? now() - tEnd : null;
        if (latencies.length > acked) throw new Error(`${latencies.length} handler starts for ${acked} enqueued jobs`);
        return {
          ...sustainedFigures({ rate, seconds, produced: { offered, issued, acked, ackedInWindow }, startedAtEnd, started: latencies.length, drainMs, latencies }),
          callP50: quantile(callMs, 0.5),
          callP99: quantile(callMs, 0.99),
        };
      } finally {
        await trip.close();
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
