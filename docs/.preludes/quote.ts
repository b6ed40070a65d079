// What the getting-started page's quote route calls (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare function fetchPrice(symbol: string, options: { signal: AbortSignal }): Promise<number>;
declare function sendEmail(to: string, options: { signal: AbortSignal }): Promise<void>;
