/**
 * What each process has in flight right now, from the ledger as it grows: the job executions,
 * periodic runs or idempotency operations it started and has not finished. The controller uses it
 * to aim a fault at a process that is in the middle of something.
 */
import { LedgerTail, type LedgerRecord } from "../ledger.js";

export interface InFlight {
  /** The job id, slot or key. */
  item: string;
  attempt: number;
  pid: number;
  t: number;
}

const PAIRS: Record<string, { start: string; field: string }> = {
  done: { start: "start", field: "job" },
  "run.done": { start: "run.start", field: "slot" },
  "fn.done": { start: "fn.start", field: "key" },
};
const STARTS = new Map(Object.values(PAIRS).map((p) => [p.start, p.field]));

export class Flight {
  private readonly tail: LedgerTail;
  private readonly open = new Map<number, Map<string, InFlight>>();
  private readonly starts = new Map<string, InFlight[]>();
  /** Every record seen so far, by kind (for conditions such as "the hog was released"). */
  private readonly seen = new Map<string, LedgerRecord[]>();
  /** `${pid}|${item}` of every finished job execution, run or operation. */
  private readonly finishedSet = new Set<string>();

  constructor(ledgerDir: string) {
    this.tail = new LedgerTail(ledgerDir);
  }

  /** Reads what was appended since the last call. */
  refresh(): void {
    for (const r of this.tail.read()) {
      const list = this.seen.get(r.k) ?? [];
      list.push(r);
      this.seen.set(r.k, list);
      const field = STARTS.get(r.k);
      if (field !== undefined) {
        const item = String(r[field]);
        const map = this.open.get(r.pid) ?? new Map<string, InFlight>();
        const entry = { item, attempt: Number(r.attempt ?? 0), pid: r.pid, t: r.t };
        map.set(item, entry);
        this.open.set(r.pid, map);
        this.starts.set(item, [...(this.starts.get(item) ?? []), entry]);
      } else if (PAIRS[r.k]) {
        const item = String(r[PAIRS[r.k]!.field]);
        this.open.get(r.pid)?.delete(item);
        this.finishedSet.add(`${r.pid}|${item}`);
      }
    }
  }

  /** What `pid` has started and not finished. */
  of(pid: number): InFlight[] {
    this.refresh();
    return [...(this.open.get(pid)?.values() ?? [])];
  }

  /** Every start of a job, slot or key so far. */
  startsOf(item: string): InFlight[] {
    this.refresh();
    return this.starts.get(item) ?? [];
  }

  /** Whether `pid` finished (some execution of) `item`. */
  finished(pid: number, item: string): boolean {
    this.refresh();
    return this.finishedSet.has(`${pid}|${item}`);
  }

  /** The first record of kind `k` seen since the start that matches `test`. */
  find(k: string, test: (r: LedgerRecord) => boolean): LedgerRecord | undefined {
    this.refresh();
    return this.seen.get(k)?.find(test);
  }

  count(k: string): number {
    this.refresh();
    return this.seen.get(k)?.length ?? 0;
  }
}
