import * as z from "zod";
import { InvalidInputError } from "../../src/index.js";
import type { AppDatabase, Statement } from "./database.js";
import type { PriceTick, TrackedAccount } from "./market.js";
import { DAY, dayOf, hourName, hourOf, midnightOf } from "./periods.js";
import {
  ADVANCE_STATE,
  BEHIND_MIDNIGHT,
  CLOSE_DAYS,
  DELETE_OLD_CLOSES,
  DELETE_OLD_SNAPSHOTS,
  DELETE_OLD_TICKS,
  FOLD_SEGMENT,
  GET_STATE,
  PRICE_AT,
  SNAPSHOT_HOURS,
  START_DAY,
  START_HOUR,
  TICKS_AFTER,
  insertTicks,
  insertTrackings,
} from "./sql.js";

/** How far the feed has been folded into the trackings (epoch ms of the last tick folded). */
export const PROCESSED_UNTIL = "processed_until";

/** Ticks read per query while catching up; each hour among them is folded in one transaction. */
const TICKS_PER_READ = 10_000;
/** Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const ROWS_PER_INSERT = 500;
/** Closed hours and days, and ticks, are kept this long after they were delivered (the seed's step 5). */
const KEEP = 2 * DAY;

export interface ProcessResult {
  /** Ticks folded into the trackings in this run. */
  ticks: number;
  /** Hours the feed passed in this run: their snapshots are written (ISO names). */
  hoursClosed: string[];
  /** Days the feed passed in this run: their extremes are frozen for the daily callbacks. */
  daysClosed: string[];
  /** The last tick folded so far (epoch ms), 0 before the first. */
  processedUntil: number;
}

const AccountSchema = z.object({
  accountId: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "1-100 letters, digits, '_', '.', ':' or '-'"),
  baseValue: z.number(),
  exposure: z.number(),
});
const TickSchema = z.object({ at: z.number().int().min(0), price: z.number().positive() });

/**
 * The extremes computation (the seed's ExtremesTrackingManager): price ticks are folded into every
 * tracking in `at` order. When the feed passes an hour, each tracking's hour is closed into a
 * snapshot (peak, bottom, and the value at the hour's last tick); when it passes midnight, each
 * tracking's day is frozen with its value at midnight. One transaction per hour of ticks, so a crash
 * leaves every tracking either before or after it, never half-folded.
 */
export class ExtremesTracker {
  constructor(
    private readonly db: AppDatabase,
    /** How old the last tick before midnight may be to count as the price at midnight. */
    private readonly midnightToleranceMs: number,
  ) {}

  /**
   * Adds accounts to track (an account already tracked is left as it is). A tracking starts in the
   * hour and day it is added in, with the ticks folded after it.
   */
  async track(accounts: readonly TrackedAccount[], now: number): Promise<{ added: number }> {
    const parsed = parseList(AccountSchema, accounts, "track: accounts");
    const processed = await this.processedUntil();
    for (let i = 0; i < parsed.length; i += ROWS_PER_INSERT) {
      const chunk = parsed.slice(i, i + ROWS_PER_INSERT);
      const params = chunk.flatMap((a) => [a.accountId, a.baseValue, a.exposure, hourOf(now), dayOf(now), dayOf(now), processed, now]);
      await this.db.query(insertTrackings(chunk.length), params);
    }
    return { added: parsed.length };
  }

  /**
   * The feed's write path. Ticks at or before the last one folded would never be folded (the feed
   * is in time order), so they are counted as `late` and not stored.
   */
  async recordTicks(ticks: readonly PriceTick[]): Promise<{ recorded: number; late: number }> {
    const parsed = parseList(TickSchema, ticks, "recordTicks: ticks");
    const processed = await this.processedUntil();
    const timely = parsed.filter((t) => t.at > processed);
    for (let i = 0; i < timely.length; i += ROWS_PER_INSERT) {
      const chunk = timely.slice(i, i + ROWS_PER_INSERT);
      await this.db.query(insertTicks(chunk.length), chunk.flatMap((t) => [t.at, t.price]));
    }
    return { recorded: timely.length, late: parsed.length - timely.length };
  }

  /** Folds every tick recorded up to `now` that has not been folded yet. */
  async process(now: number): Promise<ProcessResult> {
    const result: ProcessResult = { ticks: 0, hoursClosed: [], daysClosed: [], processedUntil: await this.processedUntil() };
    for (;;) {
      const rows = await this.db.query<{ at: number | string; price: number }>(TICKS_AFTER, [result.processedUntil, now, TICKS_PER_READ]);
      const ticks = rows.map((r) => ({ at: Number(r.at), price: Number(r.price) }));
      for (const segment of byHour(ticks)) {
        const previous = result.processedUntil;
        await this.db.transaction(await this.foldStatements(segment));
        if (previous > 0 && hourOf(previous) < segment.hour) result.hoursClosed.push(hourName(hourOf(previous)));
        if (previous > 0 && dayOf(previous) < dayOf(segment.hour)) result.daysClosed.push(dayOf(previous));
        result.processedUntil = segment.last.at;
      }
      result.ticks += ticks.length;
      if (ticks.length < TICKS_PER_READ) return result;
    }
  }

  /** True when no tracking that owes a day before `today` still waits for ticks before today's midnight. */
  async caughtUp(today: string): Promise<boolean> {
    return (await this.db.query(BEHIND_MIDNIGHT, [today, midnightOf(today)])).length === 0;
  }

  /** The seed's step 5: delivered snapshots and closes, and folded ticks, older than two days. */
  async cleanup(now: number): Promise<void> {
    const before = now - KEEP;
    await this.db.query(DELETE_OLD_SNAPSHOTS, [before]);
    await this.db.query(DELETE_OLD_CLOSES, [dayOf(before)]);
    await this.db.query(DELETE_OLD_TICKS, [Math.min(before, await this.processedUntil())]);
  }

  async processedUntil(): Promise<number> {
    const [row] = await this.db.query<{ value: number | string }>(GET_STATE, [PROCESSED_UNTIL]);
    return row ? Number(row.value) : 0;
  }

  /**
   * Closes what the segment's hour and day leave behind, then folds the segment. The boundary
   * statements touch only rows still in an earlier hour or day, so they cost nothing mid-hour.
   */
  private async foldStatements(segment: Segment): Promise<Statement[]> {
    const day = dayOf(segment.hour);
    const midnight = midnightOf(day);
    const [atMidnight] = await this.db.query<{ price: number }>(PRICE_AT, [midnight, midnight - this.midnightToleranceMs]);
    return [
      { sql: SNAPSHOT_HOURS, params: [segment.hour] },
      { sql: START_HOUR, params: [segment.hour] },
      { sql: CLOSE_DAYS, params: [day, atMidnight ? Number(atMidnight.price) : null] },
      { sql: START_DAY, params: [day] },
      { sql: FOLD_SEGMENT, params: [segment.low, segment.high, segment.last.price, segment.last.at, segment.hour] },
      { sql: ADVANCE_STATE, params: [PROCESSED_UNTIL, segment.last.at] },
    ];
  }
}

interface Segment {
  hour: number;
  low: number;
  high: number;
  last: PriceTick;
}

/** Consecutive ticks of the same hour, with their low, high and last price. */
function byHour(ticks: readonly PriceTick[]): Segment[] {
  const segments: Segment[] = [];
  for (const tick of ticks) {
    const current = segments.at(-1);
    if (current && current.hour === hourOf(tick.at)) {
      current.low = Math.min(current.low, tick.price);
      current.high = Math.max(current.high, tick.price);
      current.last = tick;
    } else segments.push({ hour: hourOf(tick.at), low: tick.price, high: tick.price, last: tick });
  }
  return segments;
}

function parseList<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S>[] {
  const parsed = z.array(schema).safeParse(value);
  if (!parsed.success) {
    throw new InvalidInputError(`${where}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ")}`);
  }
  return parsed.data;
}
