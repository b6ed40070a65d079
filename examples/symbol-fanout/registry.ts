import * as z from "zod";
import { InvalidInputError, TickworkError } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import { ALL_SYMBOLS, DISABLE_SYMBOL, ENABLED_SYMBOLS, ENABLE_SYMBOL, GET_SYMBOL, UPSERT_SYMBOL, type SymbolRow } from "./sql.js";
import { SymbolMetadataSchema, SymbolName, type RegistrySymbol, type SymbolMetadata } from "./symbols.js";

export class UnknownSymbolError extends TickworkError {
  constructor(readonly symbol: string) {
    super("SYMBOL_UNKNOWN", `unknown symbol "${symbol}": the registry has no such symbol`);
  }
}

/** Disabling the last enabled symbol would push an empty list, which every receiver would refuse. */
export class LastEnabledSymbolError extends TickworkError {
  constructor(readonly symbol: string) {
    super("SYMBOL_LAST_ENABLED", `"${symbol}" is the last enabled symbol; disabling it would leave nothing to push, and an empty symbol list is refused`);
  }
}

const RegistrySymbolSchema = SymbolMetadataSchema.extend({ enabled: z.boolean() });

/**
 * The seed's SymbolRegistry storage (its SymbolStorageManager): the `fanout_symbols` table, read for
 * the fan-out's state and changed by the admin.
 */
export class SymbolRegistry {
  constructor(
    private readonly db: AppDatabase,
    private readonly now: () => number,
  ) {}

  async all(): Promise<RegistrySymbol[]> {
    return (await this.db.query<SymbolRow>(ALL_SYMBOLS)).map((r) => ({ ...metadata(r), enabled: Number(r.enabled) === 1 })).sort(bySymbol);
  }

  /**
   * The enabled symbols with full metadata: the fan-out's state. Sorted by code unit, the same on
   * both databases, so one enabled set is always one text and one version.
   */
  async enabled(): Promise<SymbolMetadata[]> {
    return (await this.db.query<SymbolRow>(ENABLED_SYMBOLS)).map(metadata).sort(bySymbol);
  }

  /** Adds symbols or replaces their metadata and flag, in one transaction. */
  async upsert(symbols: readonly RegistrySymbol[]): Promise<void> {
    const parsed = symbols.map((s, i) => {
      const result = RegistrySymbolSchema.safeParse(s);
      if (!result.success) throw new InvalidInputError(`symbol registry: symbols[${i}]: ${result.error.issues.map((x) => `${x.path.join(".") || "(value)"}: ${x.message}`).join("; ")}`);
      return result.data;
    });
    const now = this.now();
    await this.db.transaction(parsed.map((s) => ({ sql: UPSERT_SYMBOL, params: [s.symbol, s.ticker, s.decimals, s.priceScale, s.enabled ? 1 : 0, now] })));
  }

  /**
   * Enables or disables a symbol. `changed: false` when it already was. Refuses to disable the last
   * enabled symbol (`LastEnabledSymbolError`), atomically: the check and the write are one statement.
   */
  async setEnabled(symbol: string, enabled: boolean): Promise<{ changed: boolean }> {
    const name = SymbolName.safeParse(symbol);
    if (!name.success) throw new InvalidInputError(`symbol registry: ${JSON.stringify(symbol)}: ${name.error.issues[0]!.message}`);
    const updated = await this.db.query<{ symbol: string }>(enabled ? ENABLE_SYMBOL : DISABLE_SYMBOL, [symbol, this.now()]);
    if (updated.length > 0) return { changed: true };
    const [row] = await this.db.query<SymbolRow>(GET_SYMBOL, [symbol]);
    if (!row) throw new UnknownSymbolError(symbol);
    if ((Number(row.enabled) === 1) === enabled) return { changed: false };
    throw new LastEnabledSymbolError(symbol);
  }
}

const bySymbol = (a: SymbolMetadata, b: SymbolMetadata) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0);

function metadata(r: SymbolRow): SymbolMetadata {
  return { symbol: r.symbol, ticker: r.ticker, decimals: Number(r.decimals), priceScale: Number(r.price_scale) };
}
