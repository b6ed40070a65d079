import { InvalidPayloadError } from "./errors.js";

/**
 * Serialises a value once, up front: the text is what the store writes, so a value that cannot
 * round-trip (a function, a BigInt, a cycle, `undefined`) is refused before anything is written.
 * `subject` names the value in the error ("job payload", "the result"), `where` the call it was given to.
 */
export function serialiseJson(value: unknown, { where, subject = "job payload" }: { where?: string; subject?: string } = {}): string {
  const refuse = (reason: string) => new InvalidPayloadError(reason, where, subject);
  if (value === undefined) throw refuse("undefined has no JSON form (use null for an empty value)");
  let text: string | undefined;
  try {
    text = JSON.stringify(value, rejectLossy);
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error));
  }
  if (text === undefined) throw refuse(`a ${typeof value} has no JSON form`);
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
