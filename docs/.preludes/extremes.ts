// Seed 000's account extremes: the payload, the receiver and the trackings read at midnight
// (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
interface DailyExtremes { account: string; day: string; close: number; high: number; low: number }
interface Tracking { account: string; dailyDate: string }
declare function portfolio(account: string): { onDailyExtremes(extremes: DailyExtremes, options: { signal: AbortSignal }): Promise<void> };
declare function advanceDailyDate(account: string): Promise<void>;
declare function everyTrackingCaughtUp(endOfDay: number): Promise<boolean>;
declare function trackingsDue(day: string, after: string | null, limit: number): Promise<Tracking[]>;
declare function closingOf(row: Tracking): DailyExtremes;
declare const account: string;
declare const day: string;
declare const endOfDay: number;
declare const payload: DailyExtremes;
