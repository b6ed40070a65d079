// Declarations only (no imports, so a block may import anything): what the docs' examples call
// without defining it. Each block is its own module: this prelude is prepended to it.
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
declare function sendEmail(to: string, options: { signal: AbortSignal }): Promise<void>;
