/** "4s ago", "in 3m", "2h ago": relative to the engine's clock. */
export function relative(at: number | null, now: number): string {
  if (at === null) return "—";
  const ms = at - now;
  if (Math.abs(ms) < 1_000) return "now";
  return ms < 0 ? `${span(-ms)} ago` : `in ${span(ms)}`;
}

export function span(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1_000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h}h` : `${Math.round(h / 24)}d`;
}

/** "2026-01-01 12:00:00 UTC", for tooltips. */
export function absolute(at: number | null): string {
  return at === null ? "" : new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** The first line of a stored error (the rest is its stack). */
export function firstLine(text: string | null): string {
  return text === null ? "" : (text.split("\n", 1)[0] ?? "");
}
