import type { QueueCounts } from "../queue/store.js";
import type { Tickwork } from "../tickwork.js";

/** A count that took longer than this is worth keeping for a while rather than taking again at every read. */
const SLOW_COUNT_MS = 20;
/** How long a slow count is kept: a finished count a minute old answers every question a dashboard or a scrape asks of it. */
const KEEP_SLOW_COUNT_MS = 60_000;

/**
 * Job counts by queue and status for the admin server (the dashboard, the API, `/metrics`), one per
 * engine. A store that keeps its counts (PostgreSQL) is read every time: a few rows. A store that
 * counts finished jobs by reading them (SQLite) is read every time while that is quick, and once a
 * count took more than SLOW_COUNT_MS (a table of many finished jobs), its result is kept for
 * KEEP_SLOW_COUNT_MS: a dashboard polling every 2 s must not spend a second of the store's time on
 * every poll. Readers that arrive together share one count.
 */
export class FinishedCounts {
  private last: { at: number; counts: QueueCounts[]; slow: boolean } | undefined;
  private reading: Promise<QueueCounts[]> | undefined;

  constructor(private readonly tw: Tickwork) {}

  async get(): Promise<QueueCounts[]> {
    const tw = this.tw;
    const now = tw.clock.now();
    if (!tw.store.queue.keepsCounts && this.last?.slow && now - this.last.at < KEEP_SLOW_COUNT_MS) return this.last.counts;
    this.reading ??= (async () => {
      const started = performance.now();
      const counts = await tw.jobs.counts();
      this.last = { at: now, counts, slow: performance.now() - started > SLOW_COUNT_MS };
      return counts;
    })().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }
}

const perEngine = new WeakMap<Tickwork, FinishedCounts>();

/** The engine's shared counts, so the dashboard, the API and `/metrics` of one process count once. */
export function countsOf(tw: Tickwork): FinishedCounts {
  let counts = perEngine.get(tw);
  if (!counts) perEngine.set(tw, (counts = new FinishedCounts(tw)));
  return counts;
}
