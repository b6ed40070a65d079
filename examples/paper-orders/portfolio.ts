import { createHash } from "node:crypto";
import { type Tickwork } from "../../src/index.js";
import { IdempotencyClaimLostError } from "../../src/idempotency/index.js";
import type { AppDatabase, TxBody } from "./database.js";
import * as ledger from "./ledger.js";
import { Refusal, type EffectContext, type Operation, type RefusalCode } from "./ledger.js";
import type { Market } from "./market.js";

/**
 * The portfolio's operations as a client calls them, each with a request id: seed 002's
 * check-claim-complete around the ledger's changes. `tw.idempotency.run` is the seed's
 * `withIdempotency()`: a new key is claimed and the change runs; a completed key answers from its
 * cached result without running; a key still in flight throws DuplicateRequestError; a refusal
 * (`{ success: false }`) deletes the claim so the client may fix the problem and retry with the
 * same key.
 */

/** Seed 002's result convention: a failure is returned, not thrown, so its key can be released. */
export type Outcome<T> = ({ success: true } & T) | Failure;

export interface Failure {
  success: false;
  error: RefusalCode;
  message: string;
  details: Record<string, unknown>;
}

export interface Answer<T> {
  outcome: Outcome<T>;
  /** True when the outcome is the cached result of an earlier request with the same key. */
  replayed: boolean;
}

/** Where a request is between its claim and its completion (the crash test stops it there). */
export interface EffectStep {
  operation: Operation;
  /** The scope the key is claimed under: the account id, or `owner:<name>` for a new account. */
  scope: string;
  requestId: string | null;
}

/** Test seams: called inside the claim, around the change's transaction. */
export interface EffectHooks {
  /** The key is claimed; the change has not started. */
  beforeEffect?(step: EffectStep): void | Promise<void>;
  /** The change committed (or was refused); the key is not completed yet. */
  afterEffect?(step: EffectStep): void | Promise<void>;
}

export interface PortfolioDeps {
  tw: Tickwork;
  db: AppDatabase;
  market: Market;
  /** A new or reset account's balance unless the request names one. */
  startingBalanceCents: number;
  hooks?: EffectHooks;
}

export type Portfolio = ReturnType<typeof createPortfolio>;

export function createPortfolio(deps: PortfolioDeps) {
  const { tw, db, market, hooks } = deps;

  interface Claim {
    operation: Operation;
    /** The client's request id: the idempotency key, and what the execution row records. */
    requestId: string | null;
    scope?: string;
    claimScope?: string;
    /** The key as stored, when it is not the request id itself (RESET: owner-prefixed). */
    key?: string | null;
  }

  async function once<T>(claim: Claim, input: unknown, change: (ctx: EffectContext) => TxBody<T>): Promise<Answer<T>> {
    const { operation, requestId } = claim;
    let executed = false;
    try {
      const outcome = await tw.idempotency.run<Outcome<T>>(
        // The fingerprint is the request itself: the same key sent with another body is refused.
        { scope: claim.scope, claimScope: claim.claimScope, key: claim.key ?? requestId, operation, fingerprint: fingerprint(input) },
        async () => {
          executed = true;
          const step: EffectStep = { operation, scope: (claim.claimScope ?? claim.scope)!, requestId };
          await hooks?.beforeEffect?.(step);
          const outcome = await inTransaction(() => change({ requestId, now: tw.clock.now(), market }));
          await hooks?.afterEffect?.(step);
          return outcome;
        },
      );
      return { outcome, replayed: !executed };
    } catch (error) {
      // A stalled server whose claim was taken over answers with the key's stored result, which
      // is the one every retry gets; otherwise (the other execution still runs) the error stands.
      if (error instanceof IdempotencyClaimLostError && error.stored.status === "completed") {
        return { outcome: error.stored.result as Outcome<T>, replayed: true };
      }
      throw error;
    }
  }

  async function inTransaction<T>(body: () => TxBody<T>): Promise<Outcome<T>> {
    try {
      return { success: true, ...(await db.transaction(body)) };
    } catch (error) {
      if (error instanceof Refusal) return { success: false, error: error.code, message: error.message, details: error.details };
      throw error;
    }
  }

  return {
    /** Keys of a new account are scoped by its owner: there is no account id yet. */
    createAccount(requestId: string | null, input: { owner: string; startingBalanceCents?: number }) {
      const resolved = { owner: input.owner, startingBalanceCents: input.startingBalanceCents ?? deps.startingBalanceCents };
      return once({ operation: "CREATE_ACCOUNT", requestId, scope: `owner:${input.owner}` }, resolved, (ctx) => ledger.createAccount(ctx, resolved));
    },

    deposit(accountId: string, requestId: string | null, input: { amountCents: number }) {
      return once({ operation: "DEPOSIT", requestId, scope: accountId }, input, (ctx) => ledger.deposit(ctx, accountId, input));
    },

    openPosition(accountId: string, requestId: string | null, input: { symbol: string; quantity: number }) {
      return once({ operation: "OPEN_POSITION", requestId, scope: accountId }, input, (ctx) => ledger.openPosition(ctx, accountId, input));
    },

    closePosition(accountId: string, requestId: string | null, positionId: string) {
      return once({ operation: "CLOSE_POSITION", requestId, scope: accountId }, { positionId }, (ctx) => ledger.closePosition(ctx, accountId, positionId));
    },

    placeLimitOrder(accountId: string, requestId: string | null, input: { symbol: string; quantity: number; limitPriceCents: number }) {
      return once({ operation: "PLACE_LIMIT_ORDER", requestId, scope: accountId }, input, (ctx) => ledger.placeLimitOrder(ctx, accountId, input));
    },

    /**
     * Seed 002's account-changing operation. The account id changes while it runs, so the key is
     * claimed under the account current at the start (`claimScope`) and looked up by (key, RESET)
     * alone: a retry after the reset, naming the old account or the new one, gets the cached
     * `{ newAccountId }`. That lookup spans every scope in the table; the seed's per-user Durable
     * Object had one user's keys in it, and a shared database has everyone's, so the key carries the
     * owner (`alice:<request id>`) and one owner's key never answers another's reset.
     */
    async resetAccount(accountId: string, requestId: string | null, input: { startingBalanceCents?: number }): Promise<Answer<ledger.AccountReset>> {
      const owner = await ledger.ownerOf(db, accountId);
      if (owner === null) return { outcome: { success: false, error: "UNKNOWN_ACCOUNT", message: `there is no account ${accountId}`, details: { accountId } }, replayed: false };
      const resolved = { startingBalanceCents: input.startingBalanceCents ?? deps.startingBalanceCents };
      const key = requestId === null ? null : `${owner}:${requestId}`;
      return once({ operation: "RESET", requestId, claimScope: accountId, key }, resolved, (ctx) => ledger.resetAccount(ctx, accountId, resolved));
    },

    getAccount: (accountId: string) => ledger.getAccount(db, accountId),
  };
}

/** SHA-256 of the request's input (JSON, keys in the order the API's schema gives them). */
function fingerprint(input: unknown): string {
  return createHash("sha256").update(JSON.stringify(input)).digest("hex");
}
