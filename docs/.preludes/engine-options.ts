// The values createTickwork's options take (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const store: ReturnType<typeof import("tickwork/sqlite").sqlite>;
declare const logger: import("tickwork").LoggerOption;
declare const clock: import("tickwork").Clock;
