// Seed 001's symbol registry and its receivers (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
interface SymbolMetadata { symbol: string; name: string; decimals: number }
declare const collectorIds: string[];
declare const alertIds: string[];
declare function stubFor(target: import("tickwork/fanout").FanoutTarget): { updateSymbols(payload: unknown, options: { signal: AbortSignal }): Promise<void> };
declare function enabledSymbols(): Promise<SymbolMetadata[]>;
declare function crawlerEnabled(): Promise<boolean>;
declare function readStoredSymbols(): Promise<string[] | null>;
declare function writeStoredSymbols(state: string[]): Promise<void>;
