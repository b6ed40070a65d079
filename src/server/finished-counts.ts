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
 * every poll. Past that, a read answers with the kept count at once and starts the next count
 * behind it, so no scrape or poll waits for a slow count but the very first. Readers that arrive
 * together share one count.
 */
export class FinishedCounts {
  private last: { at: number; counts: QueueCounts[]; slow: boolean } | undefined;
  private reading: Promise<QueueCounts[]> | undefined;

  constructor(private readonly tw: Tickwork) {}

  async get(): Promise<QueueCounts[]> {
    const tw = this.tw;
    const kept = !tw.store.queue.keepsCounts && this.last?.slow ? this.last : undefined;
    if (kept && tw.clock.now() - kept.at < KEEP_SLOW_COUNT_MS) return kept.counts;
    const reading = this.count();
    // A failed recount behind a kept count is the next read's to see: it starts another.
    if (kept) return (reading.catch(() => {}), kept.counts);
    return reading;
  }

  private count(): Promise<QueueCounts[]> {
    const tw = this.tw;
    this.reading ??= (async () => {
      const at = tw.clock.now();
      const started = performance.now();
      const counts = await tw.jobs.counts();
      this.last = { at, counts, slow: performance.now() - started > SLOW_COUNT_MS };
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
