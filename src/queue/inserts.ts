import { StoreUnavailableError } from "../core/errors.js";
import type { InsertResult, NewJobRow } from "./store/store.js";

/** What one insert wrote: a result per row, in order, the time it wrote them at, and whether they were written claimed (handed off). */
export interface Written {
  results: InsertResult[];
  now: number;
  claimed: boolean;
}

type Waiter = { rows: NewJobRow[]; resolve: (written: Written) => void; reject: (error: unknown) => void };

/**
 * Coalesces a queue's concurrent enqueues into one insert. An enqueue on a quiet queue is written at
 * once (after the current turn of the event loop, which gathers enqueues made in the same turn);
 * enqueues that arrive while an insert is on its way wait for it and then go together. So a server
 * handling many requests that each enqueue a job pays one statement and one commit per round trip,
 * not one per job: measured under 2,000 single enqueues a second on PostgreSQL, that is the
 * difference between a store that keeps up with its workers and one that does not (see docs/concepts/batching.md).
 *
 * Each call keeps its own outcome: a combined insert the server refused is written again call by call,
 * so one call's bad row fails that call only. A lost connection fails every call of the batch (it may
 * have committed; writing again could write twice).
 */
export class InsertBatcher {
  private waiting: Waiter[] = [];
  private busy = false;

  constructor(
    private readonly write: (rows: NewJobRow[]) => Promise<Written>,
    /** Rows per combined insert; a call with more goes alone, as it came. */
    private readonly maxRows = 1_000,
  ) {}

  /** Writes `rows` (with other calls' rows or alone) and resolves with their results. */
  add(rows: NewJobRow[]): Promise<Written> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      if (this.busy) return;
      this.busy = true;
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      let count = 0;
      let take = 0;
      while (take < this.waiting.length && (take === 0 || count + this.waiting[take]!.rows.length <= this.maxRows)) count += this.waiting[take++]!.rows.length;
      await this.send(this.waiting.splice(0, take));
    }
    this.busy = false;
  }

  private async send(batch: Waiter[]): Promise<void> {
    try {
      const written = await this.write(batch.length === 1 ? batch[0]!.rows : batch.flatMap((w) => w.rows));
      let at = 0;
      for (const w of batch) w.resolve({ ...written, results: written.results.slice(at, (at += w.rows.length)) });
    } catch (error) {
      if (batch.length === 1 || error instanceof StoreUnavailableError) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) await this.write(w.rows).then(w.resolve, w.reject);
    }
  }
}
