import { randomBytes } from "node:crypto";
import { sql, type AppDatabase, type TxBody } from "./database.js";
import type { Market } from "./market.js";
import * as q from "./sql.js";

/**
 * The paper account's changes, one database transaction each (seed 002's OrderExecutionManager and
 * LimitOrderManager, and the portfolio's reset). Each is idempotent by itself: it writes an
 * execution row carrying the request id, and looks for that row before doing anything, so running
 * the same request again (after a crash between this commit and the idempotency key's completion)
 * answers from the first run instead of executing twice. `portfolio.ts` adds the key around them.
 */

/** The operations, as seed 002 names its idempotent RPCs: keys are scoped per operation. */
export type Operation = "CREATE_ACCOUNT" | "DEPOSIT" | "OPEN_POSITION" | "CLOSE_POSITION" | "PLACE_LIMIT_ORDER" | "RESET";

export type RefusalCode =
  | "UNKNOWN_ACCOUNT"
  | "ACCOUNT_REPLACED"
  | "ACCOUNT_EXISTS"
  | "UNKNOWN_SYMBOL"
  | "INSUFFICIENT_BALANCE"
  | "UNKNOWN_POSITION"
  | "POSITION_CLOSED";

/** A business rule said no: the transaction rolls back, and the caller gets `{ success: false, error }`. */
export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** What a change needs besides its input: the request id it records, the time, the prices. */
export interface EffectContext {
  requestId: string | null;
  now: number;
  market: Market;
}

export interface AccountOpened {
  executionId: string;
  accountId: string;
  owner: string;
  balanceCents: number;
}

export interface AccountReset {
  executionId: string;
  replacedAccountId: string;
  newAccountId: string;
  balanceCents: number;
}

export interface Deposited {
  executionId: string;
  accountId: string;
  amountCents: number;
  balanceCents: number;
}

export interface PositionOpened {
  executionId: string;
  accountId: string;
  positionId: string;
  symbol: string;
  quantity: number;
  priceCents: number;
  costCents: number;
  balanceCents: number;
}

export interface PositionClosed {
  executionId: string;
  accountId: string;
  positionId: string;
  symbol: string;
  quantity: number;
  priceCents: number;
  proceedsCents: number;
  pnlCents: number;
  balanceCents: number;
}

export interface OrderPlaced {
  executionId: string;
  accountId: string;
  orderId: string;
  /** `filled`: the limit was at or above the market; it filled at the market price and opened a position. */
  status: "filled" | "open";
  symbol: string;
  quantity: number;
  limitPriceCents: number;
  fillPriceCents: number | null;
  positionId: string | null;
  /** The fill's cost, or the cost reserved at the limit price while the order rests. */
  debitedCents: number;
  balanceCents: number;
}

type Num = number | string;

interface AccountRow {
  id: string;
  owner: string;
  balance_cents: Num;
  created_at: Num;
  replaced_by: string | null;
}

interface PositionRow {
  id: string;
  account_id: string;
  symbol: string;
  quantity: Num;
  entry_price_cents: Num;
  opened_at: Num;
  exit_price_cents: Num | null;
  closed_at: Num | null;
}

interface ExecutionRow {
  id: string;
  account_id: string;
  request_id: string | null;
  operation: Operation;
  kind: "opening_balance" | "deposit" | "open" | "close" | "fill" | "reserve";
  symbol: string | null;
  quantity: Num | null;
  price_cents: Num | null;
  amount_cents: Num;
  balance_after_cents: Num;
  position_id: string | null;
  order_id: string | null;
  executed_at: Num;
  owner: string;
  entry_price_cents: Num | null;
  limit_price_cents: Num | null;
  replaced_account_id: string | null;
}

// ---- changes ----------------------------------------------------------------------------------

/** A new owner's first account, with its opening balance as its first execution. */
export function* createAccount(ctx: EffectContext, input: { owner: string; startingBalanceCents: number }): TxBody<AccountOpened> {
  const done = yield* executionOfOwner(input.owner, "CREATE_ACCOUNT", ctx.requestId);
  if (done) return accountOpened(done);
  const id = newId("acc");
  const [inserted] = yield* sql<{ id: string }>(q.INSERT_ACCOUNT, id, input.owner, input.startingBalanceCents, ctx.now);
  if (!inserted) {
    const [current] = yield* sql<{ id: string }>(q.CURRENT_ACCOUNT, input.owner);
    throw new Refusal("ACCOUNT_EXISTS", `${input.owner} already has account ${current?.id}; reset it for a fresh one`, { accountId: current?.id });
  }
  const executionId = yield* record(ctx, { accountId: id, operation: "CREATE_ACCOUNT", kind: "opening_balance", amountCents: input.startingBalanceCents, balanceAfterCents: input.startingBalanceCents });
  return accountOpened(yield* execution(executionId));
}

/**
 * Seed 002's RESET: the account is closed for good (`replaced_by`) and a new one, with a new id and
 * the starting balance, takes its place. The earlier execution is looked up across the owner's
 * accounts, because after the reset it sits on the new account: a retry names the old account (or
 * the new one) and finds it either way.
 */
export function* resetAccount(ctx: EffectContext, accountId: string, input: { startingBalanceCents: number }): TxBody<AccountReset> {
  const account = yield* lockAccount(accountId);
  const done = yield* executionOfOwner(account.owner, "RESET", ctx.requestId);
  if (done) return accountReset(done);
  mustBeCurrent(account);
  const id = newId("acc");
  // Replaced first: the index allows one current account per owner.
  yield* sql(q.REPLACE_ACCOUNT, accountId, id);
  yield* sql(q.INSERT_ACCOUNT, id, account.owner, input.startingBalanceCents, ctx.now);
  const executionId = yield* record(ctx, { accountId: id, operation: "RESET", kind: "opening_balance", amountCents: input.startingBalanceCents, balanceAfterCents: input.startingBalanceCents });
  return accountReset(yield* execution(executionId));
}

export function deposit(ctx: EffectContext, accountId: string, input: { amountCents: number }): TxBody<Deposited> {
  return change(ctx, accountId, "DEPOSIT", deposited, function* () {
    const balance = yield* addToBalance(accountId, input.amountCents);
    return yield* record(ctx, { accountId, operation: "DEPOSIT", kind: "deposit", amountCents: input.amountCents, balanceAfterCents: balance });
  });
}

/** Buys `quantity` at the market price (a long position). */
export function openPosition(ctx: EffectContext, accountId: string, input: { symbol: string; quantity: number }): TxBody<PositionOpened> {
  return change(ctx, accountId, "OPEN_POSITION", positionOpened, function* (account) {
    const price = quote(ctx.market, input.symbol);
    const cost = input.quantity * price;
    mustAfford(account, cost);
    const positionId = newId("pos");
    yield* sql(q.INSERT_POSITION, positionId, accountId, input.symbol, input.quantity, price, ctx.now);
    const balance = yield* addToBalance(accountId, -cost);
    return yield* record(ctx, { accountId, operation: "OPEN_POSITION", kind: "open", symbol: input.symbol, quantity: input.quantity, priceCents: price, amountCents: -cost, balanceAfterCents: balance, positionId });
  });
}

/** Sells the whole position at the market price. */
export function closePosition(ctx: EffectContext, accountId: string, positionId: string): TxBody<PositionClosed> {
  return change(ctx, accountId, "CLOSE_POSITION", positionClosed, function* () {
    const [position] = yield* sql<PositionRow>(q.GET_POSITION, positionId, accountId);
    if (!position) throw new Refusal("UNKNOWN_POSITION", `account ${accountId} has no position ${positionId}`, { positionId });
    if (position.closed_at !== null) throw new Refusal("POSITION_CLOSED", `position ${positionId} is already closed`, { positionId });
    const price = quote(ctx.market, position.symbol);
    const quantity = Number(position.quantity);
    const proceeds = quantity * price;
    yield* sql(q.CLOSE_POSITION, positionId, accountId, price, ctx.now);
    const balance = yield* addToBalance(accountId, proceeds);
    return yield* record(ctx, { accountId, operation: "CLOSE_POSITION", kind: "close", symbol: position.symbol, quantity, priceCents: price, amountCents: proceeds, balanceAfterCents: balance, positionId });
  });
}

/**
 * A limit buy. At or above the market it fills at once at the market price and opens a position;
 * below it rests, with its cost at the limit price reserved from the balance.
 */
export function placeLimitOrder(ctx: EffectContext, accountId: string, input: { symbol: string; quantity: number; limitPriceCents: number }): TxBody<OrderPlaced> {
  return change(ctx, accountId, "PLACE_LIMIT_ORDER", orderPlaced, function* (account) {
    const { symbol, quantity, limitPriceCents } = input;
    const market = quote(ctx.market, symbol);
    const orderId = newId("ord");
    const base = { accountId, operation: "PLACE_LIMIT_ORDER", symbol, quantity, orderId } as const;
    if (limitPriceCents >= market) {
      const cost = quantity * market;
      mustAfford(account, cost);
      const positionId = newId("pos");
      yield* sql(q.INSERT_POSITION, positionId, accountId, symbol, quantity, market, ctx.now);
      yield* sql(q.INSERT_ORDER, orderId, accountId, symbol, quantity, limitPriceCents, "filled", market, positionId, ctx.now);
      const balance = yield* addToBalance(accountId, -cost);
      return yield* record(ctx, { ...base, kind: "fill", priceCents: market, amountCents: -cost, balanceAfterCents: balance, positionId });
    }
    const reserved = quantity * limitPriceCents;
    mustAfford(account, reserved);
    yield* sql(q.INSERT_ORDER, orderId, accountId, symbol, quantity, limitPriceCents, "open", null, null, ctx.now);
    const balance = yield* addToBalance(accountId, -reserved);
    return yield* record(ctx, { ...base, kind: "reserve", amountCents: -reserved, balanceAfterCents: balance });
  });
}

/**
 * The shape of every change to an existing account: lock it, answer from an earlier execution of
 * this request if there is one, refuse a replaced account, then run the effect and answer from the
 * execution row it wrote. A first run and a re-run read their answer from the same row, so they
 * cannot disagree.
 */
function* change<T>(ctx: EffectContext, accountId: string, operation: Operation, answer: (row: ExecutionRow) => T, effect: (account: AccountRow) => TxBody<string>): TxBody<T> {
  const account = yield* lockAccount(accountId);
  if (ctx.requestId !== null) {
    const [done] = yield* sql<ExecutionRow>(q.EXECUTION_BY_REQUEST, accountId, operation, ctx.requestId);
    if (done) return answer(done);
  }
  mustBeCurrent(account);
  return answer(yield* execution(yield* effect(account)));
}

function* lockAccount(accountId: string): TxBody<AccountRow> {
  const [account] = yield* sql<AccountRow>(q.LOCK_ACCOUNT, accountId);
  if (!account) throw new Refusal("UNKNOWN_ACCOUNT", `there is no account ${accountId}`, { accountId });
  return account;
}

function mustBeCurrent(account: AccountRow): void {
  if (account.replaced_by !== null) {
    throw new Refusal("ACCOUNT_REPLACED", `account ${account.id} was reset; its successor is ${account.replaced_by}`, { accountId: account.id, replacedBy: account.replaced_by });
  }
}

function mustAfford(account: AccountRow, cents: number): void {
  const balance = Number(account.balance_cents);
  if (balance < cents) {
    throw new Refusal("INSUFFICIENT_BALANCE", `this needs ${usd(cents)} and account ${account.id} has ${usd(balance)}`, { neededCents: cents, balanceCents: balance });
  }
}

function quote(market: Market, symbol: string): number {
  const price = market.quote(symbol);
  if (price === undefined) throw new Refusal("UNKNOWN_SYMBOL", `the market does not list ${symbol}`, { symbol, listed: Object.keys(market.snapshot()) });
  return price;
}

function* executionOfOwner(owner: string, operation: Operation, requestId: string | null): TxBody<ExecutionRow | undefined> {
  if (requestId === null) return undefined;
  const [row] = yield* sql<ExecutionRow>(q.OWNER_EXECUTION_BY_REQUEST, owner, operation, requestId);
  return row;
}

function* addToBalance(accountId: string, cents: number): TxBody<number> {
  const [row] = yield* sql<{ balance_cents: Num }>(q.ADD_TO_BALANCE, accountId, cents);
  return Number(row!.balance_cents);
}

interface NewExecution {
  accountId: string;
  operation: Operation;
  kind: ExecutionRow["kind"];
  symbol?: string;
  quantity?: number;
  priceCents?: number;
  amountCents: number;
  balanceAfterCents: number;
  positionId?: string;
  orderId?: string;
}

function* record(ctx: EffectContext, e: NewExecution): TxBody<string> {
  const id = newId("exe");
  yield* sql(q.INSERT_EXECUTION, id, e.accountId, ctx.requestId, e.operation, e.kind, e.symbol ?? null, e.quantity ?? null, e.priceCents ?? null, e.amountCents, e.balanceAfterCents, e.positionId ?? null, e.orderId ?? null, ctx.now);
  return id;
}

function* execution(id: string): TxBody<ExecutionRow> {
  const [row] = yield* sql<ExecutionRow>(q.EXECUTION_BY_ID, id);
  return row!;
}

// ---- answers, read from an execution row ------------------------------------------------------

const accountOpened = (r: ExecutionRow): AccountOpened => ({ executionId: r.id, accountId: r.account_id, owner: r.owner, balanceCents: Number(r.balance_after_cents) });

const accountReset = (r: ExecutionRow): AccountReset => ({
  executionId: r.id,
  replacedAccountId: r.replaced_account_id!,
  newAccountId: r.account_id,
  balanceCents: Number(r.balance_after_cents),
});

const deposited = (r: ExecutionRow): Deposited => ({ executionId: r.id, accountId: r.account_id, amountCents: Number(r.amount_cents), balanceCents: Number(r.balance_after_cents) });

const positionOpened = (r: ExecutionRow): PositionOpened => ({
  executionId: r.id,
  accountId: r.account_id,
  positionId: r.position_id!,
  symbol: r.symbol!,
  quantity: Number(r.quantity),
  priceCents: Number(r.price_cents),
  costCents: -Number(r.amount_cents),
  balanceCents: Number(r.balance_after_cents),
});

const positionClosed = (r: ExecutionRow): PositionClosed => ({
  executionId: r.id,
  accountId: r.account_id,
  positionId: r.position_id!,
  symbol: r.symbol!,
  quantity: Number(r.quantity),
  priceCents: Number(r.price_cents),
  proceedsCents: Number(r.amount_cents),
  pnlCents: Number(r.amount_cents) - Number(r.quantity) * Number(r.entry_price_cents),
  balanceCents: Number(r.balance_after_cents),
});

const orderPlaced = (r: ExecutionRow): OrderPlaced => ({
  executionId: r.id,
  accountId: r.account_id,
  orderId: r.order_id!,
  status: r.kind === "fill" ? "filled" : "open",
  symbol: r.symbol!,
  quantity: Number(r.quantity),
  limitPriceCents: Number(r.limit_price_cents),
  fillPriceCents: r.kind === "fill" ? Number(r.price_cents) : null,
  positionId: r.position_id,
  debitedCents: -Number(r.amount_cents),
  balanceCents: Number(r.balance_after_cents),
});

// ---- reads ------------------------------------------------------------------------------------

export interface AccountView {
  id: string;
  owner: string;
  balanceCents: number;
  createdAt: number;
  replacedBy: string | null;
  positions: { id: string; symbol: string; quantity: number; entryPriceCents: number; openedAt: number }[];
  orders: { id: string; symbol: string; side: "buy"; quantity: number; limitPriceCents: number; createdAt: number }[];
}

export async function getAccount(db: AppDatabase, accountId: string): Promise<AccountView | null> {
  const [account] = await db.query<AccountRow>(q.GET_ACCOUNT, [accountId]);
  if (!account) return null;
  const positions = await db.query<PositionRow>(q.OPEN_POSITIONS, [accountId]);
  const orders = await db.query<{ id: string; symbol: string; side: "buy"; quantity: Num; limit_price_cents: Num; created_at: Num }>(q.OPEN_ORDERS, [accountId]);
  return {
    id: account.id,
    owner: account.owner,
    balanceCents: Number(account.balance_cents),
    createdAt: Number(account.created_at),
    replacedBy: account.replaced_by,
    positions: positions.map((p) => ({ id: p.id, symbol: p.symbol, quantity: Number(p.quantity), entryPriceCents: Number(p.entry_price_cents), openedAt: Number(p.opened_at) })),
    orders: orders.map((o) => ({ id: o.id, symbol: o.symbol, side: o.side, quantity: Number(o.quantity), limitPriceCents: Number(o.limit_price_cents), createdAt: Number(o.created_at) })),
  };
}

export async function ownerOf(db: AppDatabase, accountId: string): Promise<string | null> {
  const [account] = await db.query<AccountRow>(q.GET_ACCOUNT, [accountId]);
  return account?.owner ?? null;
}

/**
 * An owner's accounts in the order resets made them (each replaced by the next), the current one
 * last. Creation times can tie within a millisecond; the replaced_by chain cannot.
 */
export async function accountsOf(db: AppDatabase, owner: string): Promise<{ id: string; balanceCents: number; replacedBy: string | null }[]> {
  const rows = await db.query<AccountRow>(q.ACCOUNTS_OF_OWNER, [owner]);
  const successors = new Set(rows.map((r) => r.replaced_by));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const chain: AccountRow[] = [];
  for (let r = rows.find((x) => !successors.has(x.id)); r && !chain.includes(r); r = r.replaced_by === null ? undefined : byId.get(r.replaced_by)) chain.push(r);
  const rest = rows.filter((r) => !chain.includes(r));
  return [...chain, ...rest].map((r) => ({ id: r.id, balanceCents: Number(r.balance_cents), replacedBy: r.replaced_by }));
}

/** How many executions each of an owner's request ids produced: 1 each, if nothing ran twice. */
export async function executionsPerRequest(db: AppDatabase, owner: string): Promise<{ requestId: string; operation: Operation; count: number }[]> {
  const rows = await db.query<{ request_id: string; operation: Operation; n: Num }>(q.EXECUTIONS_PER_REQUEST, [owner]);
  return rows.map((r) => ({ requestId: r.request_id, operation: r.operation, count: Number(r.n) }));
}

/** Each of an owner's accounts: its balance and the sum of its executions, which must agree. */
export async function ledgerCheck(db: AppDatabase, owner: string): Promise<{ accountId: string; balanceCents: number; ledgerCents: number }[]> {
  const rows = await db.query<{ id: string; balance_cents: Num; ledger_cents: Num }>(q.LEDGER_CHECK, [owner]);
  return rows.map((r) => ({ accountId: r.id, balanceCents: Number(r.balance_cents), ledgerCents: Number(r.ledger_cents) }));
}

export async function executionsOf(db: AppDatabase, accountId: string): Promise<{ id: string; requestId: string | null; operation: Operation; kind: string; amountCents: number }[]> {
  const rows = await db.query<ExecutionRow>(q.EXECUTIONS_OF_ACCOUNT, [accountId]);
  return rows.map((r) => ({ id: r.id, requestId: r.request_id, operation: r.operation, kind: r.kind, amountCents: Number(r.amount_cents) }));
}

export function usd(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  return `${sign}$${(Math.abs(cents) / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}
