// A Hono app whose auth middleware sets the account (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const app: import("hono").Hono<{ Variables: { accountId: string } }>;
