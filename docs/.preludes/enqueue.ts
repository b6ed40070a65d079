// A queue's handle and the values its enqueue options take (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare const queue: import("tickwork").Queue<{ to: string }>;
declare const payload: { to: string };
declare const options: import("tickwork").EnqueueOptions;
declare const key: string;
declare const group: string;
declare const runAt: Date;
declare const delay: import("tickwork").Duration;
declare const priority: number;
declare const maxAttempts: number;
declare const tx: import("tickwork").SqlClient;
