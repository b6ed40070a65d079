/**
 * The few parts of Deno's global these tests use, typed here so the project needs no Deno type
 * package (the tests typecheck under Node's types with the rest of the repository).
 */
export interface DenoHttpServer {
  readonly addr: { hostname: string; port: number };
  /** Stops accepting connections and resolves once the open ones are done. */
  shutdown(): Promise<void>;
}

export interface DenoCommandStatus {
  success: boolean;
  /** 128 + the signal's number when a signal ended the process. */
  code: number;
  signal: string | null;
}

export interface DenoChildProcess {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly status: Promise<DenoCommandStatus>;
  kill(signal?: string): void;
}

export interface DenoRuntime {
  readonly version: { deno: string; v8: string };
  execPath(): string;
  readTextFile(path: string | URL): Promise<string>;
  Command: new (command: string, options: { args: string[]; cwd?: string; stdin: "null"; stdout: "piped"; stderr: "piped" }) => { spawn(): DenoChildProcess };
  serve(
    options: { hostname: string; port: number; onListen?(addr: { hostname: string; port: number }): void },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoHttpServer;
}

/** Deno's global; throws when the code is not running in Deno, so a test cannot pass in Node by accident. */
export function denoRuntime(): DenoRuntime {
  const deno = (globalThis as { Deno?: DenoRuntime }).Deno;
  if (deno === undefined) throw new Error(`not running in Deno (process.execPath is ${process.execPath})`);
  return deno;
}
