// Job handlers and helpers the recipes pass by name (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const handler: (job: import("tickwork").Job<unknown>, ctx: import("tickwork").JobContext) => Promise<void>;
declare function refresh(client: import("tickwork/http").HttpClient, signal: AbortSignal): Promise<{ refreshed: number }>;
