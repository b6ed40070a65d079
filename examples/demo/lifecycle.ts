/**
 * Starting and stopping the demo cleanly: a port check before anything starts, a teardown that
 * undoes whatever did start (after a failed start as after Ctrl-C), and stop signals that may
 * arrive more than once.
 */
import { createServer } from "node:net";

/**
 * Undo steps, run newest first, each one even when an earlier one fails: what started last
 * (the admin server) stops first, the database closes last.
 */
export class Teardown {
  private readonly steps: { what: string; run: () => Promise<void> | void }[] = [];

  add(what: string, run: () => Promise<void> | void): void {
    this.steps.push({ what, run });
  }

  /** Runs every step once; returns the failures, one line each. */
  async run(): Promise<string[]> {
    const problems: string[] = [];
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step.run();
      } catch (error) {
        problems.push(`${step.what}: ${String(error instanceof Error ? error.message : error).split("\n")[0]}`);
      }
    }
    return problems;
  }
}

/**
 * Calls `onStop` once, on the first SIGINT or SIGTERM, and keeps listening afterwards. A Ctrl-C
 * reaches the process more than once: the terminal signals the whole process group, npm forwards
 * the signal to its script, and tsx's CLI relays it to the node process it runs whenever that
 * process's acknowledgement is late. With no listener left, tsx's preload exits at the next
 * signal (status 130), before the stop has finished and the temporary folder is gone.
 */
export function onStopSignal(onStop: (signal: NodeJS.Signals) => void): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    onStop(signal);
  };
  process.on("SIGINT", handle);
  process.on("SIGTERM", handle);
}

/** Whether something already listens on host:port; port 0 is never taken. */
export async function portTaken(port: number, host: string): Promise<boolean> {
  if (port === 0) return false;
  const probe = createServer();
  return new Promise((resolve, reject) => {
    probe.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(true) : reject(error)));
    probe.listen(port, host, () => probe.close(() => resolve(false)));
  });
}

/** PORT as a port number, or null when it is not one. */
export function parsePort(text: string | undefined, fallback: number): number | null {
  if (text === undefined || text === "") return fallback;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) return null;
  return Number(text);
}

export function isAddressInUse(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as NodeJS.ErrnoException).code === "EADDRINUSE";
}
