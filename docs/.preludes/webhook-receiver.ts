// The receiving app, its signing secret and its store of handled events (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const app: import("hono").Hono;
declare const secret: string;
declare function recordOnce(id: string, payload: unknown): Promise<void>;
