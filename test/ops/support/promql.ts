/** PromQL's keywords that read like names: operators and modifiers, never metrics. */
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "atan2", "inf", "nan"]);

/**
 * The metric names a PromQL expression selects: every name that is not a function or aggregation
 * (followed by a parenthesis), a keyword, a label (inside braces or a `by (...)` list), a string or a
 * duration. Enough for the expressions of tickwork's rules and dashboard, which promtool has parsed.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const name = match[1]!;
    if (match[2] !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
