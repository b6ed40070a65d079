import type Database from "better-sqlite3";
import type { Store } from "../../src/store/store.js";

/** A count of one queue's jobs in one status, as both oracles below give it. */
export interface StatusCount {
  queue: string;
  status: string;
  n: number;
}

/** The job counts the jobs table itself gives, read on a side connection: the oracle. */
export function countsInTable(side: Database.Database): StatusCount[] {
  return side.prepare(`SELECT queue, status, count(*) AS n FROM tickwork_jobs GROUP BY queue, status ORDER BY queue, status`).all() as StatusCount[];
}

/** The counts the store keeps (`countByStatus`), in the oracle's shape: nonzero only, by queue and status. */
export async function keptCounts(store: Store): Promise<StatusCount[]> {
  return (await store.queue.countByStatus({}))
    .flatMap(({ queue, counts }) => Object.entries(counts).filter(([, n]) => n > 0).map(([status, n]) => ({ queue, status, n })))
    .sort((a, b) => `${a.queue}/${a.status}`.localeCompare(`${b.queue}/${b.status}`));
}
