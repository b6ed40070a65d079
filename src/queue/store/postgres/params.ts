import type { NewJobRow } from "../store.js";

/**
 * An array parameter of plain values (numbers, ids, words) as PostgreSQL's text form, `{1,2,3}`. The
 * driver would quote and escape every element; these need neither, and batches are hundreds long.
 */
export function arrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.join(",")}}`;
}

const utf8 = new TextEncoder();

/**
 * A batch's payloads (already JSON text) encoded once into one byte array, with each one's 1-based
 * offset and length in bytes, as the insert cuts them out. The driver sends a byte array as a binary
 * parameter, as it is. The array starts at one byte per character, exact for ASCII, and doubles
 * whenever a payload's UTF-8 does not fit (encodeInto stops at the end and says how far it got).
 */
export function packPayloads(rows: readonly NewJobRow[]): { bytes: Uint8Array; offsets: number[]; lengths: number[] } {
  let chars = 0;
  for (const row of rows) chars += row.payload.length;
  let bytes = new Uint8Array(Math.max(chars, 16));
  const offsets: number[] = new Array(rows.length);
  const lengths: number[] = new Array(rows.length);
  let at = 0;
  rows.forEach((row, i) => {
    const start = at;
    let text = row.payload;
    for (;;) {
      const { read, written } = utf8.encodeInto(text, bytes.subarray(at));
      at += written;
      if (read === text.length) break;
      text = text.slice(read);
      const grown = new Uint8Array(Math.max(bytes.length * 2, at + text.length * 3));
      grown.set(bytes.subarray(0, at));
      bytes = grown;
    }
    offsets[i] = start + 1;
    lengths[i] = at - start;
  });
  return { bytes: bytes.subarray(0, at), offsets, lengths };
}
