// An HTTP client for the Tenero API, and a range of times (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const tenero: import("tickwork/http").HttpClient;
declare const from: Date;
declare const to: Date;
