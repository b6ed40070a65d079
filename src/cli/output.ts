/** What commands print: results on stdout (a table, or JSON with --json), notes and errors on stderr. */

export function print(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Columns padded to their widest cell; columns named in `right` (numbers) are right-aligned. */
export function table(headers: string[], rows: string[][], right: readonly string[] = []): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.includes(headers[i]!) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** An epoch-ms time as UTC to the second, "-" for none. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "Z");
}

/** The first line of a text, cut to `max` characters. */
export function firstLine(text: string | null | undefined, max = 80): string {
  if (!text) return "";
  const line = text.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * An engine event as one line of text: its time (ISO, UTC), level and name, then its
 * fields as key=value, a value quoted as JSON when it is not a plain word (so a stack stays on one line).
 */
export function eventLine(event: { event: string; level: string; time: number; [field: string]: unknown }): string {
  const { event: name, level, time: at, ...fields } = event;
  const stamp = Number.isFinite(at) ? new Date(at).toISOString() : "-";
  const pairs = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`);
  return [stamp, level.padEnd(5), name, ...pairs].join(" ");
}
