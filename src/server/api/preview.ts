import type { PayloadPreview } from "./types.js";

/** Characters of a payload's JSON text that lists show. */
export const PREVIEW_CHARS = 200;

/** The preview of stored JSON text, `chars` long at most; the cut never splits a surrogate pair. */
export function previewOf(json: string, chars = PREVIEW_CHARS): PayloadPreview {
  if (json.length <= chars) return { payloadPreview: json, payloadChars: json.length, payloadTruncated: false };
  let end = chars;
  const last = json.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { payloadPreview: json.slice(0, end), payloadChars: json.length, payloadTruncated: true };
}
