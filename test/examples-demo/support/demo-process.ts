import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** package.json's `start` script, as npm runs it. */
export function startScript(): string {
  const pkg = JSON.parse(readFileSync(`${REPO}package.json`, "utf8")) as { scripts: Record<string, string> };
  return pkg.scripts.start!;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DemoProcess {
  child: ChildProcess;
  /** stdout and stderr so far, as lines, without the terminal's carriage returns. */
  lines(): string[];
  /** Resolves once the demo printed its "Ctrl-C stops gracefully." banner line; rejects if it exits first. */
  ready: Promise<void>;
  exited: Promise<Exit>;
  /** The demo's temporary folder, from its `database` line. */
  folder(): string | undefined;
  /** SIGKILLs the whole process group if it is still running (a failed test must not leave a demo behind). */
  killGroup(): void;
}

/**
 * Starts `command` in a process group of its own (`detached`), as a shell starts a foreground job,
 * so a signal can go to the whole group the way a terminal's Ctrl-C does.
 */
export function startDemo(command: string, args: string[], options: { env?: Record<string, string>; stdin?: "pipe" | "ignore" } = {}): DemoProcess {
  const child = spawn(command, args, {
    cwd: REPO,
    detached: true,
    env: { ...process.env, PORT: "0", ...options.env },
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  const lines = () => text.replace(/\r/g, "").split("\n");
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (text.includes("Ctrl-C stops gracefully.")) {
        clearInterval(poll);
        resolve();
      }
    }, 20);
    void exited.then((exit) => {
      clearInterval(poll);
      reject(new Error(`the demo exited (${JSON.stringify(exit)}) before it was ready:\n${text}`));
    });
  });
  ready.catch(() => {});
  return {
    child,
    lines,
    ready,
    exited,
    folder() {
      const db = /database\s+(\S+\/tickwork\.db) \(fresh, removed at exit\)/.exec(text)?.[1];
      return db === undefined ? undefined : dirname(db);
    },
    killGroup() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Already gone between the check and the kill.
      }
    },
  };
}

/** The demo's own lines ("[  3.9s] stopped"), without npm's or the terminal's. */
export function demoLines(lines: string[]): string[] {
  return lines.filter((line) => /^(\^C)?\[\s*\d+\.\ds\] /.test(line)).map((line) => line.replace(/^\^C/, ""));
}
