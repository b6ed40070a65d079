import type { QueueCounts } from "../queue/store/store.js";
import type { Tickwork } from "../tickwork.js";

/**
 * Job counts by queue and status for the admin server (the dashboard, the API, `/metrics`), one per
 * engine. Every store keeps its counts as it writes, so a count reads a few rows and is taken at
 * every read; readers that arrive while one is on its way share it.
 */
export class SharedCounts {
  private reading: Promise<QueueCounts[]> | undefined;

  constructor(private readonly tw: Tickwork) {}

  get(): Promise<QueueCounts[]> {
    this.reading ??= this.tw.jobs.counts().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }
}

const perEngine = new WeakMap<Tickwork, SharedCounts>();

/** The engine's shared counts, so the dashboard, the API and `/metrics` of one process count once. */
export function countsOf(tw: Tickwork): SharedCounts {
  let counts = perEngine.get(tw);
  if (!counts) perEngine.set(tw, (counts = new SharedCounts(tw)));
  return counts;
}
