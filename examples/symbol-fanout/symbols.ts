import * as z from "zod";

/**
 * The symbol metadata of seed 001 and the two payloads the registry pushes: collectors transform
 * prices and need everything, alerts only check that a symbol is known and get its name.
 */
export interface SymbolMetadata {
  /** Hyperliquid's coin name: "BTC", "kPEPE". */
  symbol: string;
  /** The pair the collectors quote: "BTC-USD". */
  ticker: string;
  /** Size decimals: how many decimals an amount of the coin carries. */
  decimals: number;
  /** Prices are stored as integers: price × priceScale (BTC 10: tenths of a dollar). */
  priceScale: number;
}

/** A registry row: the metadata and whether the symbol is pushed downstream. */
export interface RegistrySymbol extends SymbolMetadata {
  enabled: boolean;
}

export const SymbolName = z.string().regex(/^[A-Za-z0-9]{1,20}$/, "a symbol is 1-20 letters or digits, e.g. BTC or kPEPE");

export const SymbolMetadataSchema = z
  .object({
    symbol: SymbolName,
    ticker: z.string().regex(/^[A-Za-z0-9]{1,20}-[A-Z]{3,5}$/, "a ticker is SYMBOL-QUOTE, e.g. BTC-USD"),
    decimals: z.number().int().min(0).max(18),
    priceScale: z.number().int().min(1).max(1_000_000_000),
  })
  .strict();

/** What a collector accepts: the enabled symbols with full metadata. */
export const CollectorPayload = z.array(SymbolMetadataSchema).max(1_000);

/** What an alert receiver accepts: the enabled symbols' names. */
export const AlertPayload = z.array(SymbolName).max(1_000);

/**
 * The static mapping a collector is built with (the seed's `HyperliquidSymbolInfo`): what it runs on
 * before any push and without a stored state. Deliberately smaller than the registry: a collector
 * on its default quotes the majors only.
 */
export const STATIC_SYMBOL_INFO: readonly SymbolMetadata[] = [
  { symbol: "BTC", ticker: "BTC-USD", decimals: 5, priceScale: 10 },
  { symbol: "ETH", ticker: "ETH-USD", decimals: 4, priceScale: 100 },
  { symbol: "HYPE", ticker: "HYPE-USD", decimals: 2, priceScale: 10_000 },
  { symbol: "SOL", ticker: "SOL-USD", decimals: 2, priceScale: 1_000 },
];

/** The demo's and the tests' registry: twelve symbols, eight of them enabled. */
export const DEMO_SYMBOLS: readonly RegistrySymbol[] = [
  { symbol: "ARB", ticker: "ARB-USD", decimals: 1, priceScale: 10_000, enabled: true },
  { symbol: "AVAX", ticker: "AVAX-USD", decimals: 2, priceScale: 1_000, enabled: true },
  { symbol: "BTC", ticker: "BTC-USD", decimals: 5, priceScale: 10, enabled: true },
  { symbol: "DOGE", ticker: "DOGE-USD", decimals: 0, priceScale: 100_000, enabled: false },
  { symbol: "ETH", ticker: "ETH-USD", decimals: 4, priceScale: 100, enabled: true },
  { symbol: "HYPE", ticker: "HYPE-USD", decimals: 2, priceScale: 10_000, enabled: true },
  { symbol: "LINK", ticker: "LINK-USD", decimals: 1, priceScale: 1_000, enabled: true },
  { symbol: "SOL", ticker: "SOL-USD", decimals: 2, priceScale: 1_000, enabled: true },
  { symbol: "SUI", ticker: "SUI-USD", decimals: 1, priceScale: 10_000, enabled: false },
  { symbol: "TON", ticker: "TON-USD", decimals: 1, priceScale: 10_000, enabled: false },
  { symbol: "XRP", ticker: "XRP-USD", decimals: 0, priceScale: 10_000, enabled: true },
  { symbol: "kPEPE", ticker: "kPEPE-USD", decimals: 0, priceScale: 1_000_000, enabled: false },
];

/** The alerts' projection of the state. */
export const symbolNames = (symbols: readonly SymbolMetadata[]): string[] => symbols.map((s) => s.symbol);
