/**
 * The market the paper account trades against: one price per symbol, in cents. A paper-trading
 * service would read these from a price feed (seed 003's cache); here the demo and the tests set them.
 */
export const DEFAULT_PRICES: Readonly<Record<string, number>> = { ETH: 300_000, SOL: 15_000, STX: 200 };

export class Market {
  private readonly prices: Map<string, number>;

  constructor(prices: Readonly<Record<string, number>> = DEFAULT_PRICES) {
    this.prices = new Map(Object.entries(prices));
  }

  /** The price of one unit in cents, or undefined for a symbol the market does not list. */
  quote(symbol: string): number | undefined {
    return this.prices.get(symbol);
  }

  set(symbol: string, cents: number): void {
    if (!Number.isSafeInteger(cents) || cents <= 0) throw new RangeError(`a price is a positive number of cents, got ${cents}`);
    this.prices.set(symbol, cents);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.prices);
  }
}
