import type { Clock } from "../core/clock.js";
import { INT32_MAX, checkInt, checkText, preview } from "../core/bounds.js";
import type { Duration } from "../core/duration.js";
import { InvalidInputError, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { HeldClaim } from "./claim.js";
import type { IdempotencyContext } from "./context.js";
import { DuplicateRequestError, IdempotencyClaimLostError, IdempotencyKeyReuseError, type StoredOutcome } from "./errors.js";
import { MAX_SCOPE_LENGTH, keyRefOf, parseIdempotencyOptions } from "./input.js";
import type { IdempotencyRecord, IdempotencyStore, KeyRef } from "./store.js";

/**
 * Which key a run claims. Each text is stored as given, so it must be free of NUL characters and
 * well-formed Unicode; scope, key and operation together are the row's primary key, whence their bounds.
 */
export interface RunOptions {
  /** Whose key this is (an account id, say), 1 to 255 characters. Required unless `claimScope` is given. */
  scope?: string;
  /** The client's key (its request id), at most 255 characters. Absent or empty: the operation runs without deduplication. */
  key?: string | null;
  /** What is being done (`OPEN_POSITION`, `RESET`...), 1 to 255 characters: the same key may be used for different operations. */
  operation: string;
  /**
   * For operations that change the scope while they run (a RESET that creates a new account): the
   * key is looked up by (key, operation) alone and claimed, completed and failed under this scope,
   * the one current when the operation started. Because the lookup spans scopes, such keys must be
   * unique across scopes (a client-generated UUID is; "1" is not), since keys of many scopes may
   * share one table. 1 to 255 characters.
   */
  claimScope?: string;
  /** A digest of the request (at most 500 characters); the same key with another fingerprint is refused. */
  fingerprint?: string;
}

export interface IdempotencyOptions {
  /** How long a key is remembered; default 24 h, longer than any client keeps retrying one request. At least `staleAfter`. */
  ttl?: Duration;
  /**
   * A claim whose owner stopped renewing it for this long (default 1 min, at least 1s) is stale and
   * may be claimed by another execution. Owners renew every quarter of it while they run. An owner
   * that misses its renewals (it crashed, or was frozen or paused that long) loses the key: see `run`.
   */
  staleAfter?: Duration;
  /** Whether a returned value means the operation failed (its claim is then deleted). Default: `{ success: false }`. */
  isFailure?: (result: unknown) => boolean;
}

export type { IdempotencyContext } from "./context.js";

export interface IdempotencyDeps {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
}

const PRUNE_BATCH = 1_000;
/** The common shape of a failure that is returned rather than thrown: `{ success: false, error }`. */
const defaultIsFailure = (result: unknown): boolean =>
  typeof result === "object" && result !== null && (result as { success?: unknown }).success === false;

/**
 * Check, claim, complete. The claim is a conditional insert, so however many processes race on one
 * key, exactly one runs the operation; the others see it processing (DuplicateRequestError) or
 * completed (the cached result).
 */
export class Idempotency {
  readonly ttlMs: number;
  private readonly staleMs: number;
  private readonly isFailure: (result: unknown) => boolean;

  constructor(
    private readonly deps: IdempotencyDeps,
    options: IdempotencyOptions = {},
  ) {
    const parsed = parseIdempotencyOptions(options);
    this.ttlMs = parsed.ttl;
    this.staleMs = parsed.staleAfter;
    this.isFailure = parsed.isFailure ?? defaultIsFailure;
  }

  /**
   * Runs `fn` once per (scope, key, operation): a completed key returns its cached result without
   * running; a key in flight throws DuplicateRequestError; a failure (thrown, or a returned value
   * `isFailure` recognises) deletes the claim so the client may retry with the same key.
   *
   * An execution that loses its claim while `fn` runs (it missed its renewals for `staleAfter` and
   * another execution took the key) has `fn`'s signal aborted as soon as the loss is known, and its
   * caller gets `IdempotencyClaimLostError` (with the key's stored result when there is one), never
   * `fn`'s result: every caller that gets a result gets the one stored.
   */
  async run<T>(options: RunOptions, fn: (ctx: IdempotencyContext) => Promise<T> | T): Promise<T> {
    const { key } = options;
    // Without a key nothing is claimed, so nothing can be lost: the signal never aborts.
    if (key === undefined || key === null || key === "") return fn({ signal: new AbortController().signal });
    const { ref, fingerprint } = keyRefOf({ ...options, key });
    const { logger, store } = this.deps;

    const outcome = await this.claimOrAnswer(ref, options.claimScope !== undefined, fingerprint);
    if (outcome.kind === "replay") {
      logger.debug("idempotency.replayed", { ...ref });
      return outcome.value as T;
    }
    const claim = new HeldClaim(this.deps, ref, outcome.claimId, this.staleMs);
    let result: T;
    try {
      result = await fn(claim.context);
    } catch (error) {
      claim.stop();
      if (claim.lost || !(await store.release({ ...ref, claimId: claim.id }))) throw await this.lostError(claim, error);
      logger.info("idempotency.released", { ...ref, reason: "the operation threw", error: errorText(error) });
      throw error;
    }
    claim.stop();
    if (this.isFailure(result)) {
      if (claim.lost || !(await store.release({ ...ref, claimId: claim.id }))) throw await this.lostError(claim, undefined);
      logger.info("idempotency.released", { ...ref, reason: "the operation returned a failure" });
      return result;
    }
    let text: string | null;
    try {
      text = result === undefined ? null : serialiseJson(result, { where: `idempotency ${ref.operation}`, subject: "the result" });
    } catch (error) {
      // The operation ran but its result cannot be kept for replays: free the key rather than leave
      // it processing until staleAfter, and say what is wrong (a programming error to fix).
      await store.release({ ...ref, claimId: claim.id });
      throw error;
    }
    if (claim.lost || !(await store.complete({ ...ref, claimId: claim.id, result: text, now: this.deps.clock.now() }))) throw await this.lostError(claim, undefined);
    return result;
  }

  /** Deletes keys older than the TTL; the engine runs this at start and periodically. */
  async prune(): Promise<number> {
    const before = this.deps.clock.now() - this.ttlMs;
    let total = 0;
    for (let n = PRUNE_BATCH; n === PRUNE_BATCH; total += n) n = await this.deps.store.prune({ before, limit: PRUNE_BATCH });
    if (total) this.deps.logger.info("idempotency.pruned", { count: total, olderThanMs: this.ttlMs });
    return total;
  }

  /** Keys of a scope, newest first (for operators and the admin API). */
  async list(scope: string, limit = 50): Promise<IdempotencyRecord[]> {
    checkText(scope, "idempotency.list: scope", { max: MAX_SCOPE_LENGTH });
    // checkInt quotes the value whole; a string given as the limit is previewed instead.
    if (typeof limit !== "number") throw new InvalidInputError(`idempotency.list: limit must be an integer from 1 to ${INT32_MAX}, got ${preview(limit)}`);
    checkInt(limit, "idempotency.list: limit", { min: 1 });
    return this.deps.store.list({ scope, limit });
  }

  /**
   * The caller's error once the claim is known lost (signal aborted first, if it was not already):
   * it carries what the store now holds for the key, so the caller knows which answer is the key's.
   */
  private async lostError(claim: HeldClaim, cause: unknown): Promise<IdempotencyClaimLostError> {
    claim.markLost("completion");
    let stored: StoredOutcome = { status: "unknown" };
    try {
      const record = await this.deps.store.find(claim.ref);
      if (!record) stored = { status: "absent" };
      else if (record.status === "processing") stored = { status: "processing" };
      else stored = { status: "completed", result: record.result === null ? undefined : (JSON.parse(record.result) as unknown) };
    } catch (error) {
      this.deps.logger.error("store.error", { operation: "idempotency find", error: errorText(error) });
    }
    return new IdempotencyClaimLostError(claim.ref, stored, cause === undefined ? undefined : { cause });
  }

  private async claimOrAnswer(ref: KeyRef, byKeyOnly: boolean, fingerprint: string | null): Promise<{ kind: "claimed"; claimId: string } | { kind: "replay"; value: unknown }> {
    const { store, clock, logger } = this.deps;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = clock.now();
      const claimId = globalThis.crypto.randomUUID();
      // A scope-changing operation's earlier request may have been claimed under another scope.
      const existing = byKeyOnly ? await store.findByKey(ref) : null;
      if (!existing && (await store.claim({ ...ref, claimId, fingerprint, now }))) return { kind: "claimed", claimId };
      const record = existing ?? (await store.find(ref));
      if (!record) continue; // deleted between our insert and our read: try again
      const expired = record.createdAt < now - this.ttlMs;
      const stale = record.status === "processing" && record.renewedAt < now - this.staleMs;
      if ((expired || stale) && record.scope !== ref.scope) {
        // Found by key under another scope: clear it and claim afresh under this one.
        await store.release({ ...record, claimId: record.claimId });
        continue;
      }
      if (expired) {
        // Expired but not yet pruned: it counts as absent.
        if (await store.reclaim({ ...ref, expectedClaimId: record.claimId, claimId, fingerprint, now })) return { kind: "claimed", claimId };
        continue;
      }
      if (record.fingerprint !== null && fingerprint !== null && record.fingerprint !== fingerprint) throw new IdempotencyKeyReuseError(ref);
      if (record.status === "completed") return { kind: "replay", value: record.result === null ? undefined : JSON.parse(record.result) };
      if (stale) {
        // The owner stopped renewing its claim (it crashed, or is frozen: then it learns of the loss
        // when it wakes, and its caller gets an error instead of its result).
        if (await store.reclaim({ ...ref, expectedClaimId: record.claimId, claimId, fingerprint, now })) {
          logger.warn("idempotency.reclaimed", { ...ref, staleForMs: now - record.renewedAt });
          return { kind: "claimed", claimId };
        }
        continue;
      }
      throw new DuplicateRequestError(ref);
    }
    throw new DuplicateRequestError(ref);
  }
}
