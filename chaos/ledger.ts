/**
 * The ledger: every execution the chaos run causes, written by the process that runs it, to an
 * append-only file of its own (one JSON object per line), so a scenario's verdict rests on what the
 * processes did rather than on what the database under test says about itself.
 *
 * Why it can be trusted when its writer is SIGKILLed or SIGSTOPped at any instruction:
 * - one writer per file (the file is named for the process), so lines of two processes never interleave;
 * - each record is one `write(2)` of a whole line, made synchronously before the code it records goes
 *   on: the handler's `start` is in the file before its work begins, its `done` before it returns (so
 *   before tickwork can record the job as succeeded). A write to a regular file is not interrupted
 *   by a signal halfway, and once it returns the bytes belong to the kernel, which keeps them when
 *   the process dies;
 * - with `fsync` (the default) each record is also flushed to the disk before the code goes on, so the
 *   ledger would survive the machine itself going down;
 * - the reader refuses a line it cannot parse: a torn or corrupt record fails the run (it is counted
 *   as a ledger fault, never skipped quietly).
 * The ledger lives outside the database under test, so a PostgreSQL restart or a SQLite lock cannot
 * lose or delay a record.
 */
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, readSync, readdirSync, fstatSync, writeSync } from "node:fs";
import { join } from "node:path";

/** One record: what happened (`k`), when (epoch ms, this machine's clock), in which process. */
export interface LedgerRecord {
  k: string;
  t: number;
  pid: number;
  [field: string]: unknown;
}

export class LedgerWriter {
  private readonly fd: number;

  constructor(
    readonly path: string,
    private readonly fsync: boolean,
  ) {
    this.fd = openSync(path, "a");
  }

  /** Appends one record; returns once the line is in the file (and on the disk, with fsync). */
  append(kind: string, fields: Record<string, unknown> = {}): void {
    const line = `${JSON.stringify({ k: kind, t: Date.now(), pid: process.pid, ...fields })}\n`;
    writeSync(this.fd, line);
    if (this.fsync) fdatasyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A ledger file's path for a process: `<dir>/<role>-<pid>.jsonl`. */
export function ledgerPath(dir: string, role: string, pid = process.pid): string {
  return join(dir, `${role}-${pid}.jsonl`);
}

export interface LedgerFault {
  file: string;
  line: number;
  text: string;
}

/** Parses a ledger file's complete lines; a line that is not a record is a fault. */
function parse(file: string, text: string, firstLine: number, faults: LedgerFault[]): LedgerRecord[] {
  const records: LedgerRecord[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    if (raw === "") continue;
    try {
      const record = JSON.parse(raw) as LedgerRecord;
      if (typeof record.k !== "string" || typeof record.t !== "number" || typeof record.pid !== "number") throw new Error("not a record");
      records.push(record);
    } catch {
      faults.push({ file, line: firstLine + i, text: raw.slice(0, 200) });
    }
  }
  return records;
}

/** Every record of every ledger file in `dir`, and the lines that were not records (torn or corrupt). */
export function readLedgers(dir: string): { records: LedgerRecord[]; faults: LedgerFault[] } {
  const faults: LedgerFault[] = [];
  const records: LedgerRecord[] = [];
  if (!existsSync(dir)) return { records, faults };
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl")).sort()) {
    const file = join(dir, name);
    const text = readFileSync(file, "utf8");
    // Every record ends with a newline: text after the last one is a torn write.
    const end = text.lastIndexOf("\n") + 1;
    records.push(...parse(name, text.slice(0, end), 1, faults));
    if (end < text.length) faults.push({ file: name, line: text.slice(0, end).split("\n").length, text: `torn: ${text.slice(end, end + 200)}` });
  }
  records.sort((a, b) => a.t - b.t);
  return { records, faults };
}

/**
 * Follows the ledger files of a directory as they grow, for the controller's decisions while a
 * scenario runs (which process has work in flight right now). Only whole lines are read.
 */
export class LedgerTail {
  private readonly offsets = new Map<string, number>();
  private readonly faults: LedgerFault[] = [];

  constructor(private readonly dir: string) {}

  /** Records appended since the last call, in file order per file. */
  read(): LedgerRecord[] {
    const fresh: LedgerRecord[] = [];
    if (!existsSync(this.dir)) return fresh;
    for (const name of readdirSync(this.dir).filter((n) => n.endsWith(".jsonl"))) {
      const file = join(this.dir, name);
      const from = this.offsets.get(name) ?? 0;
      const fd = openSync(file, "r");
      try {
        const size = fstatSync(fd).size;
        if (size <= from) continue;
        const buffer = Buffer.alloc(size - from);
        const got = readSync(fd, buffer, 0, buffer.length, from);
        const text = buffer.subarray(0, got).toString("utf8");
        const end = text.lastIndexOf("\n") + 1;
        if (end === 0) continue;
        fresh.push(...parse(name, text.slice(0, end), 0, this.faults));
        this.offsets.set(name, from + Buffer.byteLength(text.slice(0, end)));
      } finally {
        closeSync(fd);
      }
    }
    return fresh;
  }
}
