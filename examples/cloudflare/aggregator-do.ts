import * as z from "zod";
import { type Tickwork } from "../../src/index.js";
import { keyset, type Delivery } from "../../src/delivery/index.js";
import { TickworkObject, type DurableObjectContext } from "../../src/runtime/cloudflare/index.js";
import { logLevel, type Env } from "./env.js";
import type { HourlyExtremes } from "./portfolio-do.js";

export const AGGREGATOR_NAME = "v1";
export const EMIT_TASK = "emit-closed-hours";
const HOUR = 3_600_000;
/** Keyset pages of closed hours: the emitted flag changes under the scan, so OFFSET would skip rows. */
const PAGE = 200;

const AccountValue = z.object({ accountId: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/), value: z.number(), at: z.number().int().nonnegative() }).strict();

/**
 * Seed 000's AccountValueAggregationTracker: account values come in (RPC), each account's hour keeps
 * its peak, bottom and close, and every closed hour becomes a callback to that user's PortfolioDO,
 * over Workers RPC, through tickwork's delivery: at most 500 calls a tick (the seed's cap), the rest
 * carried to the next alarm 100 ms later, a failed callback retried 1m 5m 15m 1h 2h and then dropped
 * with an error event. The outbox is in this object's storage, so an eviction mid-batch loses nothing.
 */
export class AggregatorDO extends TickworkObject<Env> {
  private hourly: Delivery<HourlyExtremes> | undefined;

  constructor(ctx: DurableObjectContext, env: Env) {
    super(ctx, env, { logger: { binding: "LOGS", appId: "paper-trading" }, logLevel: logLevel(env) });
  }

  protected setup(tw: Tickwork): void {
    this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS account_hours (
      account_id TEXT NOT NULL, hour INTEGER NOT NULL, peak REAL NOT NULL, bottom REAL NOT NULL, close REAL NOT NULL,
      close_at INTEGER NOT NULL, emitted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (account_id, hour))`);
    this.ctx.storage.sql.exec(`CREATE INDEX IF NOT EXISTS account_hours_unemitted ON account_hours (hour, account_id) WHERE emitted = 0`);
    const { PORTFOLIO } = this.env;
    this.hourly = tw.delivery<HourlyExtremes>("hourly-extremes", {
      budget: 500,
      send: (message) => PORTFOLIO.get(PORTFOLIO.idFromName(message.payload.accountId)).receiveExtremes(message.payload),
    });
    tw.task(EMIT_TASK, { every: "1m", run: () => this.emitClosedHours(tw.clock.now()) });
  }

  /** The price pipeline's output: account values at times. Folded into each account's hour. */
  async recordValues(values: z.input<typeof AccountValue>[]): Promise<{ recorded: number }> {
    const parsed = z.array(AccountValue).max(10_000).parse(values);
    return this.call(async () => {
      this.ctx.storage.transactionSync(() => {
        for (const v of parsed) {
          const hour = Math.floor(v.at / HOUR) * HOUR;
          this.ctx.storage.sql.exec(
            `INSERT INTO account_hours (account_id, hour, peak, bottom, close, close_at) VALUES (?1, ?2, ?3, ?3, ?3, ?4)
             ON CONFLICT (account_id, hour) DO UPDATE SET peak = max(peak, ?3), bottom = min(bottom, ?3),
               close = CASE WHEN ?4 >= close_at THEN ?3 ELSE close END, close_at = max(close_at, ?4)`,
            v.accountId, hour, v.value, v.at,
          );
        }
      });
      return { recorded: parsed.length };
    });
  }

  /**
   * Emits every closed hour not emitted yet, a keyset page at a time; each page is marked once it is
   * in the outbox. A crash in between emits the page again: its keys are still outstanding, so it is
   * skipped, and the receiver upserts anyway.
   */
  private async emitClosedHours(now: number): Promise<{ emitted: number; skipped: number }> {
    const open = Math.floor(now / HOUR) * HOUR;
    const sql = this.ctx.storage.sql;
    let emitted = 0;
    let skipped = 0;
    const pages = keyset<{ account_id: string; hour: number; peak: number; bottom: number; close: number }, { hour: number; account_id: string }>({
      fetch: (after, limit) =>
        sql
          .exec<{ account_id: string; hour: number; peak: number; bottom: number; close: number }>(
            `SELECT account_id, hour, peak, bottom, close FROM account_hours WHERE emitted = 0 AND hour < ?1 AND (hour, account_id) > (?2, ?3) ORDER BY hour, account_id LIMIT ?4`,
            open, after?.hour ?? -1, after?.account_id ?? "", limit,
          )
          .toArray()
          .map((r) => ({ ...r })),
      cursor: (row) => ({ hour: row.hour, account_id: row.account_id }),
      pageSize: PAGE,
    });
    for await (const page of pages) {
      const result = await this.hourly!.emit(
        page.map((r) => ({ key: `hourly:${r.account_id}:${r.hour}`, payload: { accountId: r.account_id, hour: r.hour, peak: r.peak, bottom: r.bottom, close: r.close } })),
      );
      emitted += result.emitted;
      skipped += result.skipped.length;
      this.ctx.storage.transactionSync(() => {
        for (const r of page) sql.exec(`UPDATE account_hours SET emitted = 1 WHERE account_id = ? AND hour = ?`, r.account_id, r.hour);
      });
    }
    return { emitted, skipped };
  }
}
