/**
 * The few parts of Bun's global these tests use, typed here so the project needs no Bun type
 * package (the tests typecheck under Node's types with the rest of the repository).
 */
export interface BunServer {
  readonly port: number;
  readonly hostname: string;
  /** `true` closes open connections too. */
  stop(closeActiveConnections?: boolean): Promise<void>;
}

export interface BunRuntime {
  readonly version: string;
  serve(options: { hostname: string; port: number; fetch(request: Request): Response | Promise<Response> }): BunServer;
}

/** Bun's global; throws when the code is not running in Bun, so a test cannot pass in Node by accident. */
export function bunRuntime(): BunRuntime {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun === undefined) throw new Error(`not running in Bun (process.execPath is ${process.execPath})`);
  return bun;
}
