import { InvalidPayloadError } from "./errors.js";

/**
 * Serialises a payload once, up front: the text is what the store writes, so a value that cannot
 * round-trip (a function, a BigInt, a cycle, `undefined`) is refused before anything is written.
 */
export function serialisePayload(payload: unknown): string {
  if (payload === undefined) throw new InvalidPayloadError("undefined has no JSON form (use null for an empty payload)");
  let text: string | undefined;
  try {
    text = JSON.stringify(payload, rejectLossy);
  } catch (error) {
    throw new InvalidPayloadError(error instanceof Error ? error.message : String(error));
  }
  if (text === undefined) throw new InvalidPayloadError(`a ${typeof payload} has no JSON form`);
  return text;
}

function rejectLossy(this: unknown, key: string, value: unknown): unknown {
  // BigInt is checked here (not left to JSON.stringify's TypeError) so the message names the field.
  if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
    throw new Error(`${key ? `"${key}" is` : "the payload is"} a ${typeof value}`);
  }
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new Error(`${key ? `"${key}" is` : "the payload is"} ${value}, which JSON would turn into null`);
  }
  // An undefined property is left out, which reads back as undefined; in an array it would become null.
  if (value === undefined && Array.isArray(this)) {
    throw new Error(`array element ${key} is undefined, which JSON would turn into null`);
  }
  return value;
}
