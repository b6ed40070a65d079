import type { Clock, TimerHandle } from "../core/clock.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, describe, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { DuplicateRequestError, IdempotencyKeyReuseError } from "./errors.js";
import type { IdempotencyRecord, IdempotencyStore, KeyRef } from "./store.js";

export interface RunOptions {
  /** Whose key this is (an account id, say). Required unless `claimScope` is given. */
  scope?: string;
  /** The client's key (its request id). Absent or empty: the operation runs without deduplication. */
  key?: string | null;
  /** What is being done (`OPEN_POSITION`, `RESET`...): the same key may be used for different operations. */
  operation: string;
  /**
   * For operations that change the scope while they run (a RESET that creates a new account): the
   * key is looked up by (key, operation) alone and claimed, completed and failed under this scope,
   * the one current when the operation started. Because the lookup spans scopes, such keys must be
   * unique across scopes (a client-generated UUID is; "1" is not), since keys of many scopes may
   * share one table.
   */
  claimScope?: string;
  /** A digest of the request; the same key with another fingerprint is refused. */
  fingerprint?: string;
}

export interface IdempotencyOptions {
  /** How long a key is remembered; default 24 h, longer than any client keeps retrying one request. */
  ttl?: Duration;
  /**
   * A claim whose owner stopped renewing it for this long is stale (the owner crashed) and may be
   * re-claimed. Owners renew every quarter of it while they run, so a live owner is never stale.
   */
  staleAfter?: Duration;
  /** Whether a returned value means the operation failed (its claim is then deleted). Default: `{ success: false }`. */
  isFailure?: (result: unknown) => boolean;
}

export interface IdempotencyDeps {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
}

const MAX_KEY_LENGTH = 255;
const DAY_MS = 86_400_000;
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
    this.ttlMs = options.ttl === undefined ? DAY_MS : toMs(options.ttl);
    this.staleMs = options.staleAfter === undefined ? 60_000 : toMs(options.staleAfter);
    if (this.staleMs < 1_000) throw new InvalidInputError(`idempotency: staleAfter must be at least 1s, got ${describe(options.staleAfter)}`);
    this.isFailure = options.isFailure ?? defaultIsFailure;
  }

  /**
   * Runs `fn` once per (scope, key, operation): a completed key returns its cached result without
   * running; a key in flight throws DuplicateRequestError; a failure (thrown, or a returned value
   * `isFailure` recognises) deletes the claim so the client may retry with the same key.
   */
  async run<T>(options: RunOptions, fn: () => Promise<T> | T): Promise<T> {
    const { key, claimScope, fingerprint } = options;
    if (key === undefined || key === null || key === "") return fn();
    const ref = this.ref(options);
    const { logger } = this.deps;

    const outcome = await this.claimOrAnswer(ref, claimScope !== undefined, fingerprint ?? null);
    if (outcome.kind === "replay") {
      logger.debug("idempotency.replayed", { ...ref });
      return outcome.value as T;
    }
    const { claimId } = outcome;
    const heartbeat = this.keepFresh(ref, claimId);
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      heartbeat.stop();
      await this.deps.store.release({ ...ref, claimId });
      logger.info("idempotency.released", { ...ref, reason: "the operation threw", error: errorText(error) });
      throw error;
    }
    heartbeat.stop();
    if (this.isFailure(result)) {
      await this.deps.store.release({ ...ref, claimId });
      logger.info("idempotency.released", { ...ref, reason: "the operation returned a failure" });
      return result;
    }
    let text: string | null;
    try {
      text = result === undefined ? null : serialiseJson(result, { where: `idempotency ${ref.operation}`, subject: "the result" });
    } catch (error) {
      // The operation ran but its result cannot be kept for replays: free the key rather than leave
      // it processing until staleAfter, and say what is wrong (a programming error to fix).
      await this.deps.store.release({ ...ref, claimId });
      throw error;
    }
    const recorded = await this.deps.store.complete({ ...ref, claimId, result: text, now: this.deps.clock.now() });
    if (!recorded) logger.warn("idempotency.completion_lost", { ...ref, reason: "the claim was taken over as stale while the operation ran" });
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
    if (typeof scope !== "string" || scope.length === 0) throw new InvalidInputError(`idempotency.list: scope must be a non-empty string, got ${describe(scope)}`);
    return this.deps.store.list({ scope, limit });
  }

  private ref({ scope, key, operation, claimScope }: RunOptions): KeyRef {
    const owner = claimScope ?? scope;
    if (typeof key !== "string" || key.length > MAX_KEY_LENGTH) {
      throw new InvalidInputError(`idempotency key must be a string of at most ${MAX_KEY_LENGTH} characters, got ${describe(key)}`);
    }
    if (typeof operation !== "string" || operation.length === 0) throw new InvalidInputError(`idempotency: operation must be a non-empty string, got ${describe(operation)}`);
    if (typeof owner !== "string" || owner.length === 0) throw new InvalidInputError(`idempotency: scope (or claimScope) must be a non-empty string, got ${describe(owner)}`);
    return { scope: owner, key, operation };
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
        // The owner stopped renewing its claim: it crashed, so its key may be claimed again.
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

  /** Renews the claim while the operation runs, so it never looks stale to another process. */
  private keepFresh(ref: KeyRef, claimId: string): { stop: () => void } {
    const { clock, store, logger } = this.deps;
    let timer: TimerHandle | undefined;
    let stopped = false;
    const beat = async () => {
      try {
        await store.renew({ ...ref, claimId, now: clock.now() });
      } catch (error) {
        logger.error("store.error", { operation: "idempotency renew", error: errorText(error) });
      }
      if (!stopped) timer = clock.setTimeout(() => void beat(), this.staleMs / 4);
    };
    timer = clock.setTimeout(() => void beat(), this.staleMs / 4);
    return {
      stop: () => {
        stopped = true;
        if (timer) clock.clearTimeout(timer);
      },
    };
  }
}
