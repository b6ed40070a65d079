// What a config file's application code provides (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
interface AppTables { close(): Promise<void> }
declare function send(payload: unknown): Promise<void>;
declare function refreshPrices(signal: AbortSignal): Promise<{ refreshed: number }>;
declare function openAppTables(database: import("tickwork").ConfigDatabase): Promise<AppTables>;
declare function chargeHandler(db: AppTables): import("tickwork").JobHandler;
declare function enqueueDuePayments(db: AppTables, payments: import("tickwork").Queue): Promise<number>;
