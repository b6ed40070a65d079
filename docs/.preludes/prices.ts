// The price refresh the examples schedule (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare function refreshPrices(signal: AbortSignal): Promise<{ refreshed: number }>;
