/**
 * The controller's side of the chaos processes: spawns them (`node --import tsx <script> '<config>'`,
 * so the pid the controller signals is the process that runs tickwork), reads their JSON lines,
 * and kills, freezes and thaws them. A process that ends without the controller having killed it
 * is remembered: a worker that dies on its own is a finding.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { until } from "./wait.js";

const REPO = fileURLToPath(new URL("../", import.meta.url));

export interface Line {
  event: string;
  [field: string]: unknown;
}

export class ChaosProcess {
  readonly lines: Line[] = [];
  private stderrText = "";
  /** The first part of stderr: an uncaught error's message and stack come before its properties. */
  private stderrHead = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Set when the controller killed it; a process that exits without this set died on its own. */
  killedByUs = false;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(
    readonly role: string,
    private readonly child: ChildProcess,
  ) {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      if (this.stderrHead.length < 8000) this.stderrHead = (this.stderrHead + chunk).slice(0, 8000);
      this.stderrText = (this.stderrText + chunk).slice(-4000);
    });
    createInterface({ input: child.stdout! }).on("line", (text) => {
      try {
        this.lines.push(JSON.parse(text) as Line);
      } catch {
        this.lines.push({ event: "stdout.text", text });
      }
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /**
   * How a process that died on its own went: the error's message and the first frames of its stack
   * (from the head of stderr), then the last lines.
   */
  deathNote(): string {
    const head = this.stderrHead.split("\n").map((l) => l.trim()).filter(Boolean);
    const at = head.findIndex((l) => l.startsWith("at "));
    const first = at >= 0 ? head.slice(Math.max(0, at - 2), at + 6) : head.slice(0, 6);
    const last = this.stderrText.trim().split("\n").slice(-3).map((l) => l.trim());
    return `${this.role} ${this.pid} exited by itself (${JSON.stringify(this.exit)}): ${first.join(" | ")} … ${last.join(" | ")}`;
  }

  said(event: string): Line | undefined {
    return this.lines.find((l) => l.event === event);
  }

  /** Waits for the process to say `event`; fails if it ends first or after `ms`. */
  async waitFor(event: string, ms: number): Promise<Line> {
    return until(
      () => {
        const line = this.said(event);
        if (line) return line;
        if (!this.alive) throw new Error(`${this.role} ${this.pid} ended (${JSON.stringify(this.exit)}) before saying ${event}; stderr:\n${this.stderrText}`);
        return undefined;
      },
      `${this.role} ${this.pid} to say ${event}`,
      ms,
      25,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\nstderr of ${this.role} ${this.pid}:\n${this.stderrText}`);
    });
  }

  send(message: unknown): void {
    if (this.alive && this.child.connected) this.child.send(message as object);
  }

  /** SIGKILL: nothing in the process runs afterwards. Resolves once it is gone. */
  async kill(): Promise<void> {
    this.killedByUs = true;
    if (this.alive) {
      this.child.kill("SIGCONT");
      this.child.kill("SIGKILL");
    }
    await this.exited;
  }

  /** SIGSTOP: the process stays, holding what it holds, and runs nothing (timers, heartbeats) until `thaw`. */
  async freeze(): Promise<void> {
    this.child.kill("SIGSTOP");
    await until(() => processState(this.pid) === "T", `pid ${this.pid} to be stopped`, 5_000, 10);
  }

  thaw(): void {
    this.child.kill("SIGCONT");
  }
}

/** Linux process state from /proc ("T" when stopped). */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Every process of a scenario; `killAll` ends those still there, frozen ones included. */
export class Processes {
  readonly all: ChaosProcess[] = [];

  spawn(role: string, script: string, config: unknown): ChaosProcess {
    const path = fileURLToPath(new URL(`./processes/${script}`, import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", path, JSON.stringify(config)], { cwd: REPO, stdio: ["ignore", "pipe", "pipe", "ipc"] });
    const p = new ChaosProcess(role, child);
    this.all.push(p);
    return p;
  }

  alive(role: string): ChaosProcess[] {
    return this.all.filter((p) => p.role === role && p.alive);
  }

  /** Processes that ended without being killed by the controller, with how and their last stderr. */
  diedOnTheirOwn(): ChaosProcess[] {
    return this.all.filter((p) => !p.alive && !p.killedByUs && !(p.exit?.code === 0));
  }

  async killAll(): Promise<void> {
    await Promise.all(this.all.map((p) => p.kill()));
  }
}
