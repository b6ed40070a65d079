/**
 * The one interface every system in the side-by-side benchmark implements (`setup`, `bulkEnqueue`,
 * `runN`, `latency`, `sustained`, `producer`, `roundTrip`, `scaleOut`, `teardown`), and the primitives each adapter module supplies to
 * get it. The workloads themselves live once, in `workloads.ts`, so every system is timed by the
 * same code: an adapter only says how its system enqueues, starts workers and counts jobs.
 */

import type { CpuPerJob } from "./cpu.js";

/** The systems this harness runs in a worker process of its own. */
export type RoundTripSystem = "tickwork" | "bullmq" | "bullmq-postgres" | "graphile-worker" | "pg-boss";

/** Of those, the ones whose producer can await a job's result (the round-trip workload; BullMQ on Redis, whose events reader it has been measured with). */
export function awaitsResults(system: RoundTripSystem): boolean {
  return system === "tickwork" || system === "bullmq";
}

/** What every benchmark job carries: its number, and when (performance.now(), this process) it was enqueued. */
export interface Payload {
  n: number;
  t: number;
  /** The payload-size workloads' body (see payloadBody), the same for every system. */
  body?: unknown;
}

/**
 * Called by a system's handler, first thing, with the job's payload; the handler returns what it
 * returns (a promise when the workload's handlers wait, as for I/O; nothing for a no-op).
 */
export type OnJob = (payload: Payload) => void | Promise<void>;

export type Setting = "defaults" | "tuned";

/** One fresh namespace (schema, SQLite file, Redis key prefix) with its workers configured, not started. */
export interface Instance {
  /** One call of the system's bulk API. */
  enqueueBatch(payloads: Payload[]): Promise<void>;
  /** One call of the system's single-job API. */
  enqueue(payload: Payload): Promise<void>;
  /** Starts the workers configured by `open`; resolves once they run. */
  startWorkers(): Promise<void>;
  /** Jobs the system's own records still show as not completed (waiting, locked/active, retrying). */
  unfinished(): Promise<number>;
  /**
   * Jobs the system recorded as completed. graphile-worker deletes completed jobs and BullMQ
   * (tuned) removes them, so their adapters count what the system reports instead (see each module).
   */
  completed(): Promise<number>;
  /** Failed attempts the system recorded (no-op handlers never throw, so anything here is a bug). */
  failed(): Promise<number>;
  stopWorkers(): Promise<void>;
  /** Closes connections and removes the namespace (drops the schema, deletes the file, the keys). */
  dispose(): Promise<void>;
}

/**
 * The system's own counts a run is settled and checked by; the in-process instances and the producers
 * of the workloads with worker processes (round-trip.ts) count alike through the adapter modules' helpers.
 */
export type Counts = Pick<Instance, "unfinished" | "completed" | "failed">;

export interface OpenOptions {
  concurrency: number;
  onJob: OnJob;
}

/** What an adapter module exports: a description, and how to open a fresh instance. */
export interface System {
  /** Stable id for JSON, e.g. "graphile-worker.tuned". */
  id: string;
  /** "graphile-worker", "pg-boss", "BullMQ", "tickwork". */
  name: string;
  /** Version of the package under test. */
  version: string;
  /** Where the jobs live: "PostgreSQL", "Redis", "SQLite (file, WAL)". */
  backend: string;
  setting: Setting;
  /** A peer (graphile-worker, pg-boss, BullMQ) or tickwork itself; ratios are against the best peer. */
  peer: boolean;
  /**
   * The worker process this system runs in the workloads with workers in other processes (round
   * trip, producer, scale-out); absent for a system the harness runs in one process only (it has no row there).
   */
  workerProcess?: RoundTripSystem;
  /** The settings used at a given concurrency, for the report (only what differs from the system's defaults). */
  settings(concurrency: number): Record<string, unknown>;
  open(options: OpenOptions): Promise<Instance>;
}

// ---- results of the workloads ------------------------------------------------------------------

export interface EnqueueFigures {
  jobsPerSec: number;
  /** CPU per job of each side (see cpu.ts); absent from results of runs before it was measured. */
  cpu?: CpuPerJob;
}

export interface RunFigures {
  /** jobs/s from the call that starts the workers to the last job recorded completed. */
  jobsPerSec: number;
  /** jobs/s to the last handler call (before the last completion is written). */
  toLastHandler: number;
  /** ms the worker start call took (inside the figure above). */
  startMs: number;
  /** Set when the run hit its time budget: jobs that ran in it, of `jobs`. */
  partial?: { ran: number; of: number; seconds: number };
  /** CPU per job of each side, from the start call to the last completion (see cpu.ts). */
  cpu?: CpuPerJob;
  /**
   * SQLite rows only: the machine's single-row write transactions per second, measured right before
   * this run, so the run is set against the machine as it was then (its speed drifts over a run).
   */
  writeLimit?: number;
}

/**
 * A backlog run by several worker processes of one system together (the scale-out workload): the run
 * figures, timed from the message that tells every process to start (`startMs`: until each said its
 * workers run), and how the jobs spread over the processes.
 */
export interface ScaleFigures extends RunFigures {
  processes: number;
  /** Handler calls each worker process made. */
  perProcess: number[];
}

export interface LatencyFigures {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Samples taken (fewer than asked when the time budget ran out first). */
  samples: number;
}

export interface SustainedFigures {
  /** Jobs asked for (rate x seconds) and jobs the producer got acknowledged within the window. */
  offered: number;
  enqueued: number;
  /** Acknowledged enqueues per second over the window. */
  enqueueRate: number;
  /** Handler starts per second over the window. */
  startRate: number;
  /** Jobs enqueued but not yet started when the window closed. */
  backlogAtEnd: number;
  /** Jobs still not started after the drain budget (0 when the queue caught up). */
  backlogAfterDrain: number;
  /** ms from the end of the window until every enqueued job had started, or null if it did not within the budget. */
  drainMs: number | null;
  /** The backlog at the end is at most one second of production and the producer kept its rate. */
  keptUp: boolean;
  /** Enqueue-to-start latency (ms) over the jobs that started; a lower bound when some never did. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** A sustained producer in another process than the worker: the sustained figures, and how long its enqueue calls took (ms). */
export interface ProducerFigures extends SustainedFigures {
  callP50: number;
  callP99: number;
  /** CPU per enqueued job: the producer (this process), the worker process and the server, over the window and the drain. */
  cpu?: CpuPerJob;
}

/** The interface main.ts drives: one call per measurement, each on a fresh namespace it sets up and tears down. */
export interface Adapter {
  system: System;
  setup(options: OpenOptions): Promise<Instance>;
  /** `bytes`: each payload's size as JSON (0: just the number and time). */
  bulkEnqueue(jobs: number, batch: number, bytes?: number): Promise<EnqueueFigures>;
  /** `bytes`: payload size (0: a number and a time); `handlerMs`: how long each handler awaits a timer (0: a no-op). */
  runN(jobs: number, concurrency: number, budgetMs: number, options?: { bytes?: number; handlerMs?: number }): Promise<RunFigures>;
  latency(samples: number, budgetMs: number): Promise<LatencyFigures>;
  sustained(options: { rate: number; seconds: number; concurrency: number; drainBudgetMs: number }): Promise<SustainedFigures>;
  /** The same producer, with the worker in a child process of its own (systems with a `workerProcess` only). */
  producer(options: { rate: number; seconds: number; concurrency: number; drainBudgetMs: number }): Promise<ProducerFigures>;
  /** Enqueue-and-await-the-result round trips, one at a time, with the worker in another process. */
  roundTrip(samples: number, concurrency: number, budgetMs: number): Promise<LatencyFigures>;
  /** A backlog of `jobs` enqueued first, then run by `processes` worker processes at once (systems with a `workerProcess` only). */
  scaleOut(options: { jobs: number; processes: number; concurrency: number; budgetMs: number }): Promise<ScaleFigures>;
  teardown(instance: Instance): Promise<void>;
}
