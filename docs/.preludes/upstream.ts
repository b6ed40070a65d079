// What a caller of an upstream API has at hand (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const signal: AbortSignal;
declare const baseUrl: string;
