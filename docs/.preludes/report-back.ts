// What the examples of jobs that report back call (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
interface Quote { symbol: string; price: number }
declare function fetchQuote(symbol: string, signal: AbortSignal): Promise<Quote>;
declare function exportReady(file: string): Promise<boolean>;
declare function readRows(file: string): Promise<unknown[]>;
declare function importRow(row: unknown, signal: AbortSignal): Promise<void>;
declare function shipmentStatus(orderId: string): Promise<"packing" | "on-hold" | "ready">;
declare function ship(orderId: string): Promise<{ trackingId: string }>;
declare function saveReport(day: string, quotes: Quote[]): Promise<string>;
declare function announce(day: string, url: string): Promise<void>;
declare function recordIssueSent(issue: number, counts: { sent: number; failed: number }): Promise<void>;
declare const subscribers: string[];
declare const id: string;
declare function reindexAccount(accountId: string, signal: AbortSignal): Promise<void>;
declare function chargeMany(charges: { customer: string; cents: number }[]): Promise<{ ok: boolean; error?: string }[]>;
declare const accountId: string;
