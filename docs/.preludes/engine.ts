// An engine, as `createTickwork(...)` returns it (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const tw: import("tickwork").Tickwork;
