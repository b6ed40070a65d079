import { type Backoff, type Tickwork } from "../../src/index.js";
import { keyset, webhookSender, type Delivery, type EmitFromResult, type EmitResult, type WebhookSenderOptions } from "../../src/delivery/index.js";
import type { AppDatabase } from "./database.js";
import type { ExtremesTracker } from "./extremes.js";
import { dayOf, hourName, nextDay } from "./periods.js";
import { ADVANCE_DAILY_DATE, ADVANCE_STATE, GET_STATE, MARK_SNAPSHOTS_EMITTED, OWED_DAYS, UNEMITTED_SNAPSHOTS, type OwedDayRow, type SnapshotRow } from "./sql.js";

/** Prefixed, so this example can declare its deliveries on an engine the other examples share. */
export const DAILY_DELIVERY = "account-extremes.daily";
export const HOURLY_DELIVERY = "account-extremes.hourly";

/** What the receiver gets for a closed hour. */
export interface HourlyCallback {
  kind: "hourly";
  accountId: string;
  /** The hour's start, `2026-03-01T23:00:00.000Z`. */
  hour: string;
  peak: number;
  bottom: number;
  /** The value at the hour's last tick. */
  close: number;
}

/** What the receiver gets for a closed UTC day. */
export interface DailyCallback {
  kind: "daily";
  accountId: string;
  /** `2026-03-01` */
  date: string;
  peak: number;
  bottom: number;
  /** The value at midnight, or the day's peak when the feed had no price at midnight (the seed's fallback). */
  close: number;
  closeSource: "midnight" | "daily_peak";
}

export type Callback = HourlyCallback | DailyCallback;

/** The delivery key: one outstanding callback per account and period, so a retry is never doubled. */
export const callbackKey = (c: Pick<HourlyCallback, "kind" | "accountId" | "hour"> | Pick<DailyCallback, "kind" | "accountId" | "date">): string =>
  c.kind === "hourly" ? `hourly:${c.accountId}:${c.hour}` : `daily:${c.accountId}:${c.date}`;

/** Which dropped daily callbacks the pipeline has already settled (epoch ms of the newest seen). */
const DAILY_DROPPED_SEEN = "daily_dropped_seen";
const PAGE = 500;

export interface CallbackOptions {
  tw: Tickwork;
  db: AppDatabase;
  tracker: ExtremesTracker;
  /** The receiver's base URL: callbacks go to `/callbacks/hourly` and `/callbacks/daily` under it. */
  receiverUrl: string;
  /** The Standard Webhooks secret (`whsec_...`) both sides hold. */
  secret: string;
  sendTimeout: number;
  retry?: Backoff;
  retryBatch?: number;
  fetch?: WebhookSenderOptions<unknown>["fetch"];
}

export interface DailyEmitResult extends EmitFromResult {
  /** Dropped daily callbacks (retries ran out) found since the last run: their trackings move on. */
  droppedSettled: number;
}

/**
 * The seed's CallbackManager on tickwork's delivery module: two deliveries (daily declared first,
 * so it is served first from each tick's budget, as the seed's step 1 comes before step 2), each
 * signed as Standard Webhooks, sent at most 500 per tick, retried on seed 000's schedule.
 */
export class Callbacks {
  readonly daily: Delivery<DailyCallback>;
  readonly hourly: Delivery<HourlyCallback>;

  constructor(private readonly o: CallbackOptions) {
    const common = { timeout: o.sendTimeout, ...(o.retry ? { retry: o.retry } : {}), ...(o.retryBatch !== undefined ? { retryBatch: o.retryBatch } : {}) };
    this.daily = o.tw.delivery<DailyCallback>(DAILY_DELIVERY, {
      ...common,
      send: webhookSender({ url: `${o.receiverUrl}/callbacks/daily`, secret: o.secret, ...(o.fetch ? { fetch: o.fetch } : {}) }),
      // The seed's "on successful daily callback: advance daily_date". The key stays held until
      // this has run, so the daily pass cannot emit the day again in between.
      onDelivered: async (m) => void (await o.db.query(ADVANCE_DAILY_DATE, [m.payload.accountId, m.payload.date, nextDay(m.payload.date)])),
    });
    this.hourly = o.tw.delivery<HourlyCallback>(HOURLY_DELIVERY, {
      ...common,
      send: webhookSender({ url: `${o.receiverUrl}/callbacks/hourly`, secret: o.secret, ...(o.fetch ? { fetch: o.fetch } : {}) }),
    });
  }

  /**
   * Emits every closed hour not yet emitted. Each page is marked emitted after it is in the
   * outbox; a crash in between emits the page again, which is harmless: a key still outstanding is
   * skipped, and the hourly receiver upserts (the seed's argument for hourly re-delivery).
   */
  async emitHourly(now: number): Promise<EmitResult> {
    const { db } = this.o;
    const pages = keyset<SnapshotRow, SnapshotRow>({
      fetch: (after, limit) => db.query<SnapshotRow>(UNEMITTED_SNAPSHOTS, [after ? Number(after.hour) : -1, after?.account_id ?? "", limit]),
      cursor: (row) => row,
      pageSize: PAGE,
    });
    async function* marked() {
      let after: SnapshotRow | null = null;
      for await (const page of pages) {
        yield page;
        const last = page.at(-1)!;
        await db.query(MARK_SNAPSHOTS_EMITTED, [now, after ? Number(after.hour) : -1, after?.account_id ?? "", Number(last.hour), last.account_id]);
        after = last;
      }
    }
    const { emitted, skipped } = await this.hourly.emitFrom({
      pages: marked(),
      item: (row) => {
        const payload: HourlyCallback = { kind: "hourly", accountId: row.account_id, hour: hourName(Number(row.hour)), peak: Number(row.peak), bottom: Number(row.bottom), close: Number(row.close) };
        return { key: callbackKey(payload), payload };
      },
    });
    return { emitted, skipped };
  }

  /**
   * The seed's daily pass: nothing until every tracking has caught up to the end of the day
   * (`ready`); then the trackings that owe a day, by keyset, each with its closed day. A tracking
   * whose callback is still outstanding (sending, or waiting for a retry) holds its key, and `emit`
   * skips it: no duplicate daily callback.
   */
  async emitDaily(now: number): Promise<DailyEmitResult> {
    const { db, tracker } = this.o;
    const today = dayOf(now);
    const droppedSettled = await this.settleDropped();
    const result = await this.daily.emitFrom({
      ready: () => tracker.caughtUp(today),
      pages: keyset<OwedDayRow, string>({
        fetch: (after, limit) => db.query<OwedDayRow>(OWED_DAYS, [after ?? "", today, limit]),
        cursor: (row) => row.account_id,
        pageSize: PAGE,
      }),
      item: (row) => {
        const midnight = row.midnight_value === null ? null : Number(row.midnight_value);
        const payload: DailyCallback = {
          kind: "daily",
          accountId: row.account_id,
          date: row.day,
          peak: Number(row.peak),
          bottom: Number(row.bottom),
          close: midnight ?? Number(row.peak),
          closeSource: midnight === null ? "daily_peak" : "midnight",
        };
        return { key: callbackKey(payload), payload };
      },
    });
    return { ...result, droppedSettled };
  }

  /**
   * A daily callback whose retries ran out is in the dead-letter table, waiting for `replay()` (which
   * keeps its id). Its tracking moves on to the next day, as a delivered one would: otherwise the
   * daily pass would emit the day again with a new id, and every later day would queue behind it.
   */
  private async settleDropped(): Promise<number> {
    const { db } = this.o;
    const [row] = await db.query<{ value: number | string }>(GET_STATE, [DAILY_DROPPED_SEEN]);
    const seen = row ? Number(row.value) : 0;
    let newest = seen;
    let settled = 0;
    let before: { droppedAt: number; id: string } | undefined;
    for (;;) {
      const page = await this.daily.dropped({ limit: PAGE, ...(before ? { before } : {}) });
      // Newest first: stop at what an earlier run settled (the same millisecond is looked at again).
      const fresh = page.filter((d) => d.droppedAt >= seen);
      for (const d of fresh) {
        await db.query(ADVANCE_DAILY_DATE, [d.payload.accountId, d.payload.date, nextDay(d.payload.date)]);
        if (d.droppedAt > seen) settled++;
        newest = Math.max(newest, d.droppedAt);
      }
      if (fresh.length < page.length || page.length < PAGE) break;
      const last = page.at(-1)!;
      before = { droppedAt: last.droppedAt, id: last.id };
    }
    if (newest > seen) await db.query(ADVANCE_STATE, [DAILY_DROPPED_SEEN, newest]);
    return settled;
  }
}
