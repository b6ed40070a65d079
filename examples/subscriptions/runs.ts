import type { ChildResult, JobHandler } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import type { PaymentResult } from "./processor.js";
import type { RunPayload } from "./scheduler.js";
import { LIST_RUNS, RECORD_RUN } from "./sql.js";

/** A payment run's totals, as its summary job records them in `payment_runs` and returns them. */
export interface RunTotals {
  /** Payments the run queued. */
  payments: number;
  /** Payments charged (a charge the provider replayed for a lost answer included). */
  succeeded: number;
  /** Payments with nothing left to charge when their job ran (cancelled, or paid meanwhile). */
  skipped: number;
  /** Payments that failed for good (declined, or out of attempts) or whose job was cancelled. */
  failed: number;
  /** The amount the run charged. */
  amountCents: number;
}

export interface PaymentRun extends RunTotals {
  /** The summary job's id. */
  id: string;
  startedAt: number;
  finishedAt: number;
}

export interface RunSummaryDeps {
  db: AppDatabase;
  now: () => number;
  onSummary?: (run: PaymentRun) => void;
}

/** Adds up a run's payment jobs as its summary job reads them. */
export function totalsOf(children: readonly ChildResult[]): RunTotals {
  const totals: RunTotals = { payments: children.length, succeeded: 0, skipped: 0, failed: 0, amountCents: 0 };
  for (const child of children) {
    if (child.status !== "succeeded") {
      totals.failed++;
      continue;
    }
    const result = child.result as PaymentResult;
    if (result.status === "charged") {
      totals.succeeded++;
      totals.amountCents += result.amountCents;
    } else {
      totals.skipped++;
    }
  }
  return totals;
}

/**
 * The `payment-runs` queue's handler: a run's summary job, run once by tickwork when every payment
 * job of its batch has ended. It reads their results (`ctx.childResults()`, in the batch's order),
 * records the totals in `payment_runs` and returns them, so `tw.jobs.wait(run.batch.id)` answers
 * with them too.
 */
export function runSummaryHandler(deps: RunSummaryDeps): JobHandler<RunPayload> {
  return async (job, ctx) => {
    const totals = totalsOf(await ctx.childResults());
    const run: PaymentRun = { id: job.id, startedAt: job.payload.startedAt, finishedAt: deps.now(), ...totals };
    await deps.db.query(RECORD_RUN, [run.id, run.startedAt, run.finishedAt, run.payments, run.succeeded, run.skipped, run.failed, run.amountCents]);
    deps.onSummary?.(run);
    return totals;
  };
}

export async function listRuns(db: AppDatabase): Promise<PaymentRun[]> {
  const rows = await db.query<Record<"id" | "started_at" | "finished_at" | "payments" | "succeeded" | "skipped" | "failed" | "amount_cents", string | number>>(LIST_RUNS);
  return rows.map((r) => ({
    id: String(r.id),
    startedAt: Number(r.started_at),
    finishedAt: Number(r.finished_at),
    payments: Number(r.payments),
    succeeded: Number(r.succeeded),
    skipped: Number(r.skipped),
    failed: Number(r.failed),
    amountCents: Number(r.amount_cents),
  }));
}
