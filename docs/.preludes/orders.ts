// A paper-trading API's request and operations (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const accountId: string;
declare const requestId: string;
declare const body: { symbol: string; quantity: number };
declare function hashOf(value: unknown): string;
declare function openPosition(accountId: string, body: { symbol: string; quantity: number }): Promise<{ positionId: string }>;
declare function resetAccount(accountId: string): Promise<{ accountId: string }>;
