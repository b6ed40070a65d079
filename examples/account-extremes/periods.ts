/** Hours and UTC days, the two periods the callbacks report on. Times are epoch milliseconds. */

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** The start of the hour `ms` falls in. */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR) * HOUR;

/** The UTC day `ms` falls in, as `YYYY-MM-DD` (text that sorts as the days do, on both databases). */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The midnight (UTC) that starts `day`. */
export const midnightOf = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);

export const nextDay = (day: string): string => dayOf(midnightOf(day) + DAY);

/** An hour as the hourly callbacks name it: `2026-03-01T23:00:00.000Z`. */
export const hourName = (ms: number): string => new Date(ms).toISOString();
