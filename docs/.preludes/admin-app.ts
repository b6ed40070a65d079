// The application's own Hono app and the admin token (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const app: import("hono").Hono;
declare const token: string;
