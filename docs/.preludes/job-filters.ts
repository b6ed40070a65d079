// The values `tw.jobs` takes (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const id: string;
declare const queue: string;
declare const status: import("tickwork").JobStatus;
declare const key: string;
declare const before: string;
declare const limit: number;
