/** Order statistics and number formatting for the reports. */

/** The q-quantile (0..1) by the nearest-rank method; NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** 1234 ms -> "1.23 s"; 85 -> "85 ms"; NaN -> "n/a". */
export function seconds(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** "p50 1.20 s, max 3.40 s (n=12)", or "none" without samples. */
export function spread(values: readonly number[]): string {
  if (values.length === 0) return "none";
  return `p50 ${seconds(quantile(values, 0.5))}, max ${seconds(Math.max(...values))} (n=${values.length})`;
}
