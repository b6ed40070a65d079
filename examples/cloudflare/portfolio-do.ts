import * as z from "zod";
import { type Tickwork } from "../../src/index.js";
import { DuplicateRequestError, IdempotencyKeyReuseError } from "../../src/idempotency/index.js";
import { TickworkObject, type DurableObjectContext } from "../../src/runtime/cloudflare/index.js";
import { logLevel, type Env } from "./env.js";

/** Seed 000's callback: one account's extremes of a closed hour. */
export interface HourlyExtremes {
  accountId: string;
  /** The hour's start, epoch ms. */
  hour: number;
  peak: number;
  bottom: number;
  close: number;
}

export type Outcome<T> = ({ success: true } & T) | { success: false; error: string; message: string };

const OpenPosition = z.object({ symbol: z.string().regex(/^[A-Z0-9]{1,20}$/), quantity: z.number().int().positive(), priceCents: z.number().int().positive() }).strict();

const STARTING_BALANCE_CENTS = 10_000_00;

/**
 * Seed 002's UserPaperTradePortfolio: one object per user (`idFromName(userId)`). Every change takes
 * the client's request id as an idempotency key, checked, claimed and completed in this object's own
 * storage by tickwork: a retry gets the first answer, a duplicate in flight is refused, a refusal
 * (`{ success: false }`) frees the key. RESET replaces the paper account with a new one: its key is
 * claimed under the account it started from (`claimScope`), as the seed's account-changing
 * operations. It also receives seed 000's hourly extremes, by RPC, as an upsert: a re-delivery
 * changes nothing.
 */
export class PortfolioDO extends TickworkObject<Env> {
  constructor(ctx: DurableObjectContext, env: Env) {
    super(ctx, env, { logger: { binding: "LOGS", appId: "paper-trading" }, logLevel: logLevel(env) });
  }

  protected setup(_tw: Tickwork): void {
    const sql = this.ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, balance_cents INTEGER NOT NULL, replaced_by TEXT, created_at INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS positions (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, symbol TEXT NOT NULL, quantity INTEGER NOT NULL, price_cents INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS hourly_extremes (hour INTEGER PRIMARY KEY, peak REAL NOT NULL, bottom REAL NOT NULL, close REAL NOT NULL, received INTEGER NOT NULL)`);
  }

  /** Opens a position on the current account; refused (key freed) when the balance does not cover it. */
  async openPosition(requestId: string | null, input: z.input<typeof OpenPosition>): Promise<Outcome<{ positionId: string; balanceCents: number }>> {
    const parsed = OpenPosition.safeParse(input);
    if (!parsed.success) return { success: false, error: "INVALID_INPUT", message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
    const order = parsed.data;
    const account = await this.currentAccount();
    return keyRefusals(() => this.idempotent({ scope: account.id, key: requestId, operation: "OPEN_POSITION", fingerprint: JSON.stringify(order) }, (): Outcome<{ positionId: string; balanceCents: number }> => {
      const cost = order.quantity * order.priceCents;
      if (cost > account.balanceCents) return { success: false, error: "INSUFFICIENT_BALANCE", message: `costs ${cost} cents, the balance is ${account.balanceCents}` };
      const positionId = crypto.randomUUID();
      this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec(`INSERT INTO positions VALUES (?, ?, ?, ?, ?)`, positionId, account.id, order.symbol, order.quantity, order.priceCents);
        this.ctx.storage.sql.exec(`UPDATE accounts SET balance_cents = balance_cents - ? WHERE id = ?`, cost, account.id);
      });
      return { success: true, positionId, balanceCents: account.balanceCents - cost };
    }));
  }

  /** Replaces the paper account with a fresh one (seed 002's RESET: the scope changes while it runs). */
  async reset(requestId: string | null): Promise<Outcome<{ accountId: string; replaced: string }>> {
    const account = await this.currentAccount();
    return keyRefusals(() => this.idempotent({ claimScope: account.id, key: requestId, operation: "RESET" }, (): Outcome<{ accountId: string; replaced: string }> => {
      const accountId = crypto.randomUUID();
      this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec(`INSERT INTO accounts VALUES (?, ?, NULL, ?)`, accountId, STARTING_BALANCE_CENTS, Date.now());
        this.ctx.storage.sql.exec(`UPDATE accounts SET replaced_by = ? WHERE id = ?`, accountId, account.id);
      });
      return { success: true, accountId, replaced: account.id };
    }));
  }

  /** Seed 000's callback target: the hour's extremes, upserted (the aggregator may deliver twice). */
  async receiveExtremes(callback: HourlyExtremes): Promise<void> {
    // Through call(): the tables exist once the engine's setup ran, whatever this instance's first call was.
    return this.call(async () => {
      this.ctx.storage.sql.exec(
        `INSERT INTO hourly_extremes VALUES (?, ?, ?, ?, ?) ON CONFLICT (hour) DO UPDATE SET peak = excluded.peak, bottom = excluded.bottom, close = excluded.close, received = excluded.received`,
        callback.hour, callback.peak, callback.bottom, callback.close, Date.now(),
      );
    });
  }

  async view(): Promise<{ account: { id: string; balanceCents: number }; accounts: number; positions: number; extremes: Omit<HourlyExtremes, "accountId">[] }> {
    const account = await this.call(() => this.currentAccount());
    const sql = this.ctx.storage.sql;
    return {
      account,
      accounts: sql.exec<{ n: number }>(`SELECT count(*) AS n FROM accounts`).one().n,
      positions: sql.exec<{ n: number }>(`SELECT count(*) AS n FROM positions`).one().n,
      extremes: sql.exec<{ hour: number; peak: number; bottom: number; close: number }>(`SELECT hour, peak, bottom, close FROM hourly_extremes ORDER BY hour`).toArray().map((r) => ({ ...r })),
    };
  }

  /** The account that is not replaced; the first one is opened on the user's first call. */
  private async currentAccount(): Promise<{ id: string; balanceCents: number }> {
    await this.engine();
    const sql = this.ctx.storage.sql;
    const row = sql.exec<{ id: string; balance_cents: number }>(`SELECT id, balance_cents FROM accounts WHERE replaced_by IS NULL`).toArray()[0];
    if (row) return { id: row.id, balanceCents: row.balance_cents };
    const id = crypto.randomUUID();
    sql.exec(`INSERT INTO accounts VALUES (?, ?, NULL, ?)`, id, STARTING_BALANCE_CENTS, Date.now());
    return { id, balanceCents: STARTING_BALANCE_CENTS };
  }
}

/**
 * The key's own refusals as answers (an error's class does not survive Workers RPC): a duplicate
 * still in flight, or a key reused with another body. Neither touches the key.
 */
async function keyRefusals<T>(run: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DuplicateRequestError) return { success: false, error: "DUPLICATE_REQUEST", message: error.message };
    if (error instanceof IdempotencyKeyReuseError) return { success: false, error: "KEY_REUSED", message: error.message };
    throw error;
  }
}
