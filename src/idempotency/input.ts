import * as z from "zod";
import { MAX_INDEXED_TEXT, checkText } from "../core/bounds.js";
import { InvalidInputError } from "../core/errors.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import type { KeyRef } from "./store.js";

/**
 * (scope, key, operation) is the table's primary key, and PostgreSQL refuses a btree index row over
 * 2,704 bytes. A length counts UTF-16 code units, and a unit takes at most 3 bytes of UTF-8 (a
 * surrogate pair, 4 for two), so three texts of 255 take at most 2,295 bytes and always fit. 255 is
 * also the `Idempotency-Key` header's limit.
 */
export const MAX_KEY_LENGTH = 255;
export const MAX_SCOPE_LENGTH = 255;
export const MAX_OPERATION_LENGTH = 255;
/** A fingerprint is a digest of the request (SHA-256 in hex is 64 characters), not the request itself. */
export const MAX_FINGERPRINT_LENGTH = MAX_INDEXED_TEXT;

/** The fields of `run()` that reach the store. */
export interface RunInput {
  scope?: string;
  key: string;
  operation: string;
  claimScope?: string;
  fingerprint?: string;
}

/**
 * The row a run claims, checked before anything is written: every text the store keeps is within
 * its bound, free of NUL and well-formed Unicode (PostgreSQL would refuse the one and silently
 * replace the other, so two different keys could collide).
 */
export function keyRefOf({ scope, key, operation, claimScope, fingerprint }: RunInput): { ref: KeyRef; fingerprint: string | null } {
  const where = "idempotency.run";
  checkText(key, `${where}: key`, { max: MAX_KEY_LENGTH });
  checkText(operation, `${where}: operation`, { max: MAX_OPERATION_LENGTH });
  if (claimScope !== undefined) checkText(claimScope, `${where}: claimScope`, { max: MAX_SCOPE_LENGTH });
  else if (scope === undefined) throw new InvalidInputError(`${where}: scope (or claimScope) is required: whose key this is, such as an account id`);
  else checkText(scope, `${where}: scope`, { max: MAX_SCOPE_LENGTH });
  if (fingerprint !== undefined) checkText(fingerprint, `${where}: fingerprint`, { max: MAX_FINGERPRINT_LENGTH });
  return { ref: { scope: claimScope ?? scope!, key, operation }, fingerprint: fingerprint ?? null };
}

const DAY_MS = 86_400_000;

const Options = z
  .object({
    /** How long a key is remembered; default 24 h, longer than any client keeps retrying one request. */
    ttl: durationMs.default(DAY_MS),
    staleAfter: durationMs.default(60_000).refine((ms) => ms >= 1_000, "must be at least 1s"),
    isFailure: fn<(result: unknown) => boolean>("a function (result) => boolean").optional(),
  })
  .strict()
  // A key that expired while its claim was still fresh could be claimed from under a running owner.
  .refine((o) => o.ttl >= o.staleAfter, { message: "must be at least staleAfter (1 min unless given): a key is remembered at least as long as its claim is held", path: ["ttl"] });

export type ParsedOptions = z.output<typeof Options>;

export function parseIdempotencyOptions(options: unknown): ParsedOptions {
  return parseOptions(Options, options, "idempotency options");
}
