import { atomically, type SqlDb } from "../db/sql-db.js";
import type { ScheduleStore, TaskRow } from "./store.js";
import type { TaskOutcome } from "./task.js";

/** Statements the schedule runs; one text serves SQLite and PostgreSQL. */

const CLAIM_SLOT_LEASED = `
  UPDATE tickwork_tasks SET last_slot = $2, missed = $3, running_slot = $2, running_by = $4, running_until = $5
  WHERE name = $1 AND last_slot = $6 AND (running_by IS NULL OR running_until < $7)
  RETURNING name`;

const CLAIM_SLOT = `UPDATE tickwork_tasks SET last_slot = $2, missed = $3 WHERE name = $1 AND last_slot = $4 RETURNING name`;

// last_run_at is written by every recorded run and running_by by every leased one, so once this
// claim is won no other process sees both empty until the run has been recorded.
const CLAIM_FIRST_RUN = `
  UPDATE tickwork_tasks SET running_slot = $2, running_by = $3, running_until = $4
  WHERE name = $1 AND last_run_at IS NULL AND (running_by IS NULL OR running_until < $5)
  RETURNING name`;

const SKIP_SLOT = `
  UPDATE tickwork_tasks SET last_slot = $2, overlaps_skipped = overlaps_skipped + 1
  WHERE name = $1 AND last_slot = $3 RETURNING name`;

const TAKE_OVER = `
  UPDATE tickwork_tasks SET running_by = $2, running_until = $3
  WHERE name = $1 AND running_by IS NOT NULL AND running_until < $4
  RETURNING running_slot`;

const CLAIM_MANUAL = `
  UPDATE tickwork_tasks SET running_slot = $2, running_by = $3, running_until = $4, next_run_after = NULL
  WHERE name = $1 AND (running_by IS NULL OR running_until < $5)
  RETURNING name`;

// Outcome bookkeeping in one statement: counters, the opt-in breaker, the rate-limit backoff
// (next_run_after), and the run lease released. A leased run's outcome is fenced: if another process
// took the run over (this one was frozen past its lease), nothing is recorded.
const FINISH_RUN = `
  UPDATE tickwork_tasks SET
    last_run_at = $2, last_scheduled_at = $3, last_duration_ms = $4, last_outcome = $5, last_result = $6, last_error = $7,
    runs = runs + 1,
    failures = failures + $8,
    consecutive_failures = CASE WHEN $8 = 1 THEN consecutive_failures + 1 WHEN $5 = 'succeeded' THEN 0 ELSE consecutive_failures END,
    breaker_open = CASE WHEN $8 = 1 AND $9 > 0 AND consecutive_failures + 1 >= $9 THEN 1 ELSE breaker_open END,
    next_run_after = $10,
    running_slot = CASE WHEN running_by = $11 THEN NULL ELSE running_slot END,
    running_until = CASE WHEN running_by = $11 THEN NULL ELSE running_until END,
    running_by = CASE WHEN running_by = $11 THEN NULL ELSE running_by END
  WHERE name = $1 AND ($11 = '' OR running_by = $11)
  RETURNING consecutive_failures, breaker_open`;

const INSERT_RUN = `
  INSERT INTO tickwork_task_runs (task, scheduled_at, started_at, finished_at, duration_ms, outcome, manual, result, error, runner)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

const TRIM_RUNS = `
  DELETE FROM tickwork_task_runs WHERE task = $1
    AND id NOT IN (SELECT id FROM tickwork_task_runs WHERE task = $1 ORDER BY id DESC LIMIT $2)`;

interface RawTask {
  name: string;
  last_slot: number | string;
  missed: number;
  running_slot: number | string | null;
  running_by: string | null;
  running_until: number | string | null;
  next_run_after: number | string | null;
  paused_until: number | string | null;
  breaker_open: number;
  consecutive_failures: number;
  last_run_at: number | string | null;
  last_scheduled_at: number | string | null;
  last_duration_ms: number | string | null;
  last_outcome: TaskOutcome | null;
  last_result: string | null;
  last_error: string | null;
  runs: number | string;
  failures: number | string;
  overlaps_skipped: number | string;
}

interface RawRun {
  task: string;
  scheduled_at: number | string;
  started_at: number | string;
  finished_at: number | string;
  duration_ms: number | string;
  outcome: TaskOutcome;
  manual: number;
  result: string | null;
  error: string | null;
  runner: string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

export class SqlScheduleStore implements ScheduleStore {
  constructor(private readonly db: SqlDb) {}

  async ensureTasks({ tasks, now }: { tasks: { name: string; slot: number }[]; now: number }): Promise<void> {
    // One commit for all the rows, rather than one each.
    await atomically(this.db, tasks.length, function* (tx) {
      for (const { name, slot } of tasks) {
        yield* tx.query(`INSERT INTO tickwork_tasks (name, last_slot, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`, [name, slot, now]);
      }
    });
  }

  async loadTasks({ names }: { names: string[] }): Promise<TaskRow[]> {
    const wanted = new Set(names);
    const rows = await this.db.query<RawTask>(`SELECT * FROM tickwork_tasks`);
    return rows.filter((r) => wanted.has(r.name)).map(toTaskRow);
  }

  async pausedUntil(): Promise<number | null> {
    const [row] = await this.db.query<{ paused_until: number | string | null }>(`SELECT paused_until FROM tickwork_scheduler WHERE id = 1`);
    return num(row?.paused_until ?? null);
  }

  async setPausedUntil({ until }: { until: number | null }): Promise<void> {
    await this.db.query(`UPDATE tickwork_scheduler SET paused_until = $1 WHERE id = 1`, [until]);
  }

  async claimSlot({ name, slot, expectedLastSlot, missed, now, lease }: Parameters<ScheduleStore["claimSlot"]>[0]): Promise<boolean> {
    const rows = lease
      ? await this.db.query(CLAIM_SLOT_LEASED, [name, slot, missed, lease.runner, lease.until, expectedLastSlot, now])
      : await this.db.query(CLAIM_SLOT, [name, slot, missed, expectedLastSlot]);
    return rows.length > 0;
  }

  async claimFirstRun({ name, slot, runner, until, now }: Parameters<ScheduleStore["claimFirstRun"]>[0]): Promise<boolean> {
    return (await this.db.query(CLAIM_FIRST_RUN, [name, slot, runner, until, now])).length > 0;
  }

  async skipSlot({ name, slot, expectedLastSlot }: { name: string; slot: number; expectedLastSlot: number }): Promise<boolean> {
    return (await this.db.query(SKIP_SLOT, [name, slot, expectedLastSlot])).length > 0;
  }

  async takeOver({ name, runner, until, now }: { name: string; runner: string; until: number; now: number }): Promise<number | null> {
    const [row] = await this.db.query<{ running_slot: number | string }>(TAKE_OVER, [name, runner, until, now]);
    return row ? Number(row.running_slot) : null;
  }

  async claimManual({ name, slot, runner, until, now }: Parameters<ScheduleStore["claimManual"]>[0]): Promise<boolean> {
    return (await this.db.query(CLAIM_MANUAL, [name, slot, runner, until, now])).length > 0;
  }

  async renewLease({ name, runner, until }: { name: string; runner: string; until: number }): Promise<boolean> {
    return (await this.db.query(`UPDATE tickwork_tasks SET running_until = $3 WHERE name = $1 AND running_by = $2 RETURNING name`, [name, runner, until])).length > 0;
  }

  async releaseLease({ name, runner, now }: { name: string; runner: string; now: number }): Promise<void> {
    // A lease that ended a millisecond ago can be taken over at once.
    await this.db.query(`UPDATE tickwork_tasks SET running_until = $3 WHERE name = $1 AND running_by = $2`, [name, runner, now - 1]);
  }

  async finishRun({ record, leased, nextRunAfter, breakerAfter, keep }: Parameters<ScheduleStore["finishRun"]>[0]) {
    const result = record.result === undefined ? null : JSON.stringify(record.result);
    // One transaction: a crash between the statements would leave a run counted on its task (and
    // its lease released) without its history row.
    return this.db.transaction(function* (tx) {
      const [row] = yield* tx.query<{ consecutive_failures: number; breaker_open: number }>(FINISH_RUN, [
        record.task,
        // lastRunAt is when the last run started; it ended lastDurationMs later.
        record.startedAt,
        record.scheduledAt,
        record.durationMs,
        record.outcome,
        result,
        record.error,
        record.outcome === "failed" ? 1 : 0,
        breakerAfter ?? 0,
        nextRunAfter,
        leased ? record.runner : "",
      ]);
      if (!row) return { recorded: false, consecutiveFailures: 0, breakerOpened: false };
      if (keep > 0) {
        yield* tx.query(INSERT_RUN, [
          record.task, record.scheduledAt, record.startedAt, record.finishedAt, record.durationMs, record.outcome,
          record.manual ? 1 : 0, result, record.error, record.runner,
        ]);
        yield* tx.query(TRIM_RUNS, [record.task, keep]);
      }
      const consecutiveFailures = row.consecutive_failures;
      return { recorded: true, consecutiveFailures, breakerOpened: row.breaker_open === 1 && breakerAfter !== null && consecutiveFailures === breakerAfter };
    });
  }

  async setTaskPause({ name, until }: { name: string; until: number | null }): Promise<void> {
    await this.db.query(`UPDATE tickwork_tasks SET paused_until = $2 WHERE name = $1`, [name, until]);
  }

  async resume({ name }: { name: string | null }): Promise<void> {
    const set = `breaker_open = 0, paused_until = NULL, consecutive_failures = CASE WHEN breaker_open = 1 THEN 0 ELSE consecutive_failures END`;
    if (name === null) await this.db.query(`UPDATE tickwork_tasks SET ${set}`);
    else await this.db.query(`UPDATE tickwork_tasks SET ${set} WHERE name = $1`, [name]);
  }

  async history({ name, limit }: { name: string; limit: number }) {
    const rows = await this.db.query<RawRun>(`SELECT * FROM tickwork_task_runs WHERE task = $1 ORDER BY id DESC LIMIT $2`, [name, limit]);
    return rows.map((r) => ({
      task: r.task,
      scheduledAt: Number(r.scheduled_at),
      startedAt: Number(r.started_at),
      finishedAt: Number(r.finished_at),
      durationMs: Number(r.duration_ms),
      outcome: r.outcome,
      manual: r.manual === 1,
      result: parse(r.result),
      error: r.error,
      runner: r.runner,
    }));
  }
}

function toTaskRow(r: RawTask): TaskRow {
  return {
    name: r.name,
    lastSlot: Number(r.last_slot),
    missed: r.missed,
    runningSlot: num(r.running_slot),
    runningBy: r.running_by,
    runningUntil: num(r.running_until),
    nextRunAfter: num(r.next_run_after),
    pausedUntil: num(r.paused_until),
    breakerOpen: r.breaker_open === 1,
    consecutiveFailures: r.consecutive_failures,
    lastRunAt: num(r.last_run_at),
    lastScheduledAt: num(r.last_scheduled_at),
    lastDurationMs: num(r.last_duration_ms),
    lastOutcome: r.last_outcome,
    lastResult: parse(r.last_result),
    lastError: r.last_error,
    runs: Number(r.runs),
    failures: Number(r.failures),
    overlapsSkipped: Number(r.overlaps_skipped),
  };
}
