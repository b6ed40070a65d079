import type { Duration } from "../../src/index.js";
import type { ReconcileChooser } from "../../src/fanout/index.js";
import type { AppDatabase } from "./database.js";
import { CRAWLER_ENABLED, SET_CRAWLER } from "./sql.js";

/** The periodic task standing in for the seed's crawler (its own alarm, hourly by default). */
export const CRAWL_TASK = "symbol-fanout.crawl";
export const CRAWL_EVERY = "1h";

/**
 * The seed's CrawlerConfigManager: whether the crawler is enabled, in the `fanout_crawler` table, so
 * every process (and a restart) reads the same flag.
 */
export class CrawlerConfig {
  constructor(
    private readonly db: AppDatabase,
    private readonly now: () => number,
  ) {}

  async enabled(): Promise<boolean> {
    const [row] = await this.db.query<{ enabled: number | string }>(CRAWLER_ENABLED);
    return row !== undefined && Number(row.enabled) === 1;
  }

  async setEnabled(enabled: boolean): Promise<void> {
    await this.db.query(SET_CRAWLER, [enabled ? 1 : 0, this.now()]);
  }
}

/**
 * Seed 001's reconciliation rule, as a fan-out `reconcile` chooser: while the crawler is enabled,
 * reconcile right after each of its runs (its hourly alarm, no wake-up of its own); while it is
 * disabled, every `interval` (15 minutes). The fan-out asks at the end of each round and after each
 * crawl run, so a switch takes effect by the next of either.
 */
export function reconcileWithCrawler(crawler: CrawlerConfig, interval: Duration): ReconcileChooser {
  return async () => ((await crawler.enabled()) ? { after: CRAWL_TASK } : interval);
}
