import * as z from "zod";
import { type Duration, type Limiter, type TaskContext, type Tickwork } from "../../src/index.js";
import { RateLimitedError, type HttpClient } from "../../src/http/index.js";
import type { AppDatabase } from "./database.js";
import { lastFetched, priceKey, type CachedPrice } from "./prices.js";
import { ADVANCE_CURSOR, AGENT_TOKENS, COUNT_PENDING, ENSURE_CURSOR, GET_CURSOR, RECORD_SWEPT_SWAP, SWAP_EXISTS } from "./sql.js";

/**
 * Seed 003's two periodic tasks. Each is a plain function of its inputs (clients, database, cache)
 * plus the task context, registered by `defineTasks`. They never share a failure: tickwork runs each
 * in its own try/catch (option B), so a Tenero 429 does not cost the Hiro sweep its slot.
 */

export const PRICES_TASK = "tenero-prices";
export const SWEEP_TASK = "competition-sweep";

/** The production cadences (see README: why 5 and 15 minutes). */
export const PRICES_EVERY = "5m";
export const SWEEP_EVERY = "15m";

// ---- prices ---------------------------------------------------------------------------------

/** The seed's `lastTeneroResult`, plus the tokens left for the next run when the budget ran out. */
export interface PriceRefreshResult {
  succeeded: number;
  failed: number;
  /** Tokens not fetched this run because the minute's budget was spent. */
  deferred: number;
  /** What Tenero said was left of the tightest budget after the last answer. */
  rateLimitRemaining?: number;
}

const TeneroPrice = z.object({ token: z.string(), price: z.number().nonnegative() });

/** A month budget below this share left is worth a warning long before the 429s start. */
const MONTH_BUDGET_WARNING = 0.05;

/** The token set: the static base, then every token an agent has swapped from (the seed's query). */
export async function activeTokens(db: AppDatabase, baseTokens: readonly string[]): Promise<string[]> {
  const rows = await db.query<{ token_in: string }>(AGENT_TOKENS);
  return [...new Set([...baseTokens, ...rows.map((r) => r.token_in)])];
}

type PriceContext = Pick<TaskContext, "signal" | "logger" | "backoffUntil">;

/**
 * Fetches each token's price in turn and caches `{ price, rateLimit }` under `tenero:price:{id}`.
 * Stalest first, so when the budget is smaller than the token set the set rotates instead of the
 * same tokens starving. Sequential on purpose: each answer says what is left of the budget, and the
 * run stops at the answer that says nothing is (option C), rather than spending requests it already
 * knows will be refused. A 429 stops it the same way. Either way it asks the scheduler to skip the
 * task until the budget's reset and returns what it did. Other failures (a 5xx, a timeout, an unknown
 * token) cost that token only; a run where every fetch failed throws, so it counts as a failure.
 *
 * With `teneroBudget` (the limiter the Tenero client draws from), a run also stops when that budget is
 * paused, whoever paused it (another process's 429, a spent month): it backs off until the pause ends
 * instead of waiting inside the client for it, which for a month's budget would outlast the run.
 */
export async function refreshPrices(
  deps: { tenero: HttpClient; teneroBudget?: Pick<Limiter, "state">; tw: Tickwork; db: AppDatabase; baseTokens: readonly string[] },
  ctx: PriceContext,
): Promise<PriceRefreshResult> {
  const { tenero, teneroBudget, tw, db, baseTokens } = deps;
  const tokens = await activeTokens(db, baseTokens);
  const fetched = await lastFetched(tw.cache, tokens);
  const order = [...tokens].sort((a, b) => (fetched.get(a) ?? -Infinity) - (fetched.get(b) ?? -Infinity));
  const result: PriceRefreshResult = { succeeded: 0, failed: 0, deferred: 0 };
  const errors: string[] = [];
  let monthWarned = false;

  for (const [i, token] of order.entries()) {
    const pausedUntil = teneroBudget ? (await teneroBudget.state()).pausedUntil : null;
    if (pausedUntil !== null) {
      result.deferred = order.length - i;
      ctx.backoffUntil(pausedUntil);
      break;
    }
    try {
      const res = await tenero.get(`/v1/tokens/${encodeURIComponent(token)}/price`, { schema: TeneroPrice, signal: ctx.signal });
      const cached: CachedPrice = { price: res.data.price, rateLimit: res.rateLimit };
      await tw.cache.put(priceKey(token), cached);
      result.succeeded++;
      const rl = res.rateLimit;
      if (rl?.remaining != null) result.rateLimitRemaining = rl.remaining;
      const month = rl?.scopes?.month;
      if (!monthWarned && month?.limit && month.remaining !== null && month.remaining / month.limit < MONTH_BUDGET_WARNING) {
        monthWarned = true;
        ctx.logger.warn("prices.month_budget_low", { remaining: month.remaining, limit: month.limit, resetAt: month.resetAt });
      }
      if (rl?.exhausted) {
        result.deferred = order.length - i - 1;
        ctx.backoffUntil(rl.resetAt ?? "1m");
        break;
      }
    } catch (error) {
      if (error instanceof RateLimitedError) {
        result.deferred = order.length - i;
        result.rateLimitRemaining = error.rateLimit?.remaining ?? 0;
        ctx.backoffUntil(error.retryAfter);
        break;
      }
      // The caller's abort (timeout, shutdown) ends the run; anything else costs this token only.
      if (ctx.signal.aborted) throw error;
      result.failed++;
      errors.push(`${token}: ${errorMessage(error)}`);
      ctx.logger.warn("prices.token_failed", { token, error: errorMessage(error) });
    }
  }
  if (result.succeeded === 0 && result.failed > 0) {
    throw new Error(`every price fetch failed (${result.failed}): ${errors.slice(0, 3).join("; ")}${errors.length > 3 ? "; ..." : ""}`);
  }
  return result;
}

// ---- competition sweep ----------------------------------------------------------------------

/** The seed's `lastSweepResult`: today's cron summary shape. */
export interface SweepResult {
  /** Transactions looked at in the new blocks. */
  scanned: number;
  /** Swaps by competition agents among them. */
  found: number;
  /** Found swaps new to the swaps table. */
  inserted: number;
  /** Found swaps the table already had (the agent reported them on the request path): now confirmed. */
  alreadyKnown: number;
  /** Agents' reported swaps still not seen on chain after this sweep. */
  pending: number;
  /** Found swaps that failed on chain, recorded as rejected. */
  rejected: number;
  /** The last block height scanned; the next run starts above it. */
  cursor: number;
}

const ChainBlocks = z.object({
  tip_height: z.number().int(),
  results: z.array(
    z.object({
      height: z.number().int().positive(),
      txs: z.array(
        z.object({
          tx_id: z.string(),
          sender_address: z.string(),
          tx_status: z.string(),
          swap: z.object({ token_in: z.string(), token_out: z.string(), amount_in: z.number() }).nullable(),
        }),
      ),
    }),
  ),
});

export const SWEEP_ID = "competition-sweep";

export interface SweepOptions {
  /** Blocks asked for per request; default 20. */
  blocksPerPage?: number;
  /** Requests per run at most, so one run stays short after a long outage; the cursor carries the rest. Default 10. */
  maxPages?: number;
}

/**
 * The seed's `runCompetitionCron`: scans the blocks above the cursor in `competition_state` and
 * records the agents' swaps. Each page's writes and its cursor move commit in one transaction, so a
 * crash (or a 429 on the next page) loses nothing and repeats nothing: the next run starts where the
 * last commit ended. The scheduler runs one sweep at a time across all processes (the seed's
 * single-writer guarantee); the upsert's `WHERE status = 'pending'` keeps a second writer (the
 * request path, later a chainhook push) from undoing it.
 */
export async function sweepCompetition(
  deps: { hiro: HttpClient; db: AppDatabase; agents: ReadonlySet<string>; now: () => number } & SweepOptions,
  ctx: Pick<TaskContext, "signal">,
): Promise<SweepResult> {
  const { hiro, db, agents, now } = deps;
  const limit = deps.blocksPerPage ?? 20;
  const maxPages = deps.maxPages ?? 10;
  await db.query(ENSURE_CURSOR, [SWEEP_ID, now()]);
  const [state] = await db.query<{ last_block_height: number | string }>(GET_CURSOR, [SWEEP_ID]);
  let cursor = Number(state!.last_block_height);
  const result: SweepResult = { scanned: 0, found: 0, inserted: 0, alreadyKnown: 0, pending: 0, rejected: 0, cursor };

  for (let page = 0; page < maxPages; page++) {
    const res = await hiro.get("/extended/v2/blocks", { query: { after_height: cursor, limit }, schema: ChainBlocks, signal: ctx.signal });
    const blocks = res.data.results;
    if (blocks.length === 0) break;
    const at = now();
    const statements = [];
    for (const block of blocks) {
      for (const tx of block.txs) {
        result.scanned++;
        if (!tx.swap || !agents.has(tx.sender_address)) continue;
        result.found++;
        const ok = tx.tx_status === "success";
        if (!ok) result.rejected++;
        else if ((await db.query(SWAP_EXISTS, [tx.tx_id])).length > 0) result.alreadyKnown++;
        else result.inserted++;
        const { token_in, token_out, amount_in } = tx.swap;
        statements.push({ sql: RECORD_SWEPT_SWAP, params: [tx.tx_id, tx.sender_address, token_in, token_out, amount_in, ok ? "confirmed" : "rejected", block.height, at] });
      }
    }
    const last = blocks.at(-1)!.height;
    statements.push({ sql: ADVANCE_CURSOR, params: [SWEEP_ID, last, at] });
    await db.transaction(statements);
    cursor = last;
    result.cursor = cursor;
    if (blocks.length < limit || cursor >= res.data.tip_height) break;
  }
  const [pending] = await db.query<{ n: number | string }>(COUNT_PENDING);
  result.pending = Number(pending?.n ?? 0);
  return result;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---- registration ---------------------------------------------------------------------------

export interface TaskDeps {
  tw: Tickwork;
  db: AppDatabase;
  tenero: HttpClient;
  /** The shared budget `tenero` draws from (`createTeneroClient`); without it a run learns of a pause only from Tenero's answers. */
  teneroBudget?: Limiter;
  hiro: HttpClient;
  baseTokens: readonly string[];
  agents: ReadonlySet<string>;
  sweep?: SweepOptions;
  /** Production: 5m and 15m. The demo shortens them. */
  cadence?: { prices?: Duration; sweep?: Duration };
}

export function defineTasks(deps: TaskDeps): void {
  const { tw } = deps;
  // Both run at the first tick when they have never run (seed 003: a task whose lastRunAt is 0 runs
  // on the first alarm): the price cache is filled at a first start rather than a slot later, and
  // the sweep picks up what arrived while nothing swept. After a restart they keep to their slots.
  tw.task(PRICES_TASK, {
    every: deps.cadence?.prices ?? PRICES_EVERY,
    immediately: true,
    // A run fetches at most the budget (100 requests); far less than the cadence even when each is slow.
    timeout: "2m",
    run: (ctx) => refreshPrices(deps, ctx),
  });
  tw.task(SWEEP_TASK, {
    every: deps.cadence?.sweep ?? SWEEP_EVERY,
    immediately: true,
    timeout: "5m",
    // Option D, opt-in: six failed sweeps in a row (90 minutes at 15m) pause the sweep and raise a
    // critical `task.breaker_opened`; `tw.scheduler.resume("competition-sweep")` closes it. A 429
    // backs off instead and never counts.
    breaker: { after: 6 },
    run: (ctx) => sweepCompetition({ ...deps, ...deps.sweep, now: () => tw.clock.now() }, ctx),
  });
}
