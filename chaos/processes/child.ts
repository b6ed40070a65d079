/**
 * The child side of a chaos process (`node --import tsx chaos/processes/<role>.ts '<config JSON>'`):
 * its config, a line to the controller when it is ready or done (JSON on stdout), and its end when
 * the controller goes away.
 */
import type { LogEvent } from "../../src/index.js";
import { LedgerWriter, ledgerPath } from "../ledger.js";

export interface ChildBase {
  /** Where this process's ledger file goes. */
  ledgerDir: string;
  fsync: boolean;
}

export function child<Config extends ChildBase>(role: string): { config: Config; ledger: LedgerWriter; say: (event: string, fields?: Record<string, unknown>) => void } {
  // Started with an IPC channel: if the controller dies without killing this process, the channel
  // closes and the process ends rather than run on as an orphan holding leases and connections.
  process.on("disconnect", () => process.exit(1));
  const config = JSON.parse(process.argv[2] ?? "") as Config;
  const ledger = new LedgerWriter(ledgerPath(config.ledgerDir, role), config.fsync);
  ledger.append("process.started", { role });
  return {
    config,
    ledger,
    say: (event, fields = {}) => process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`),
  };
}

/**
 * The engine events a verdict needs, written to the ledger as they happen: a lease lost or an
 * outcome refused (fencing at work), a rescue, a takeover, a store failure. Other events are dropped.
 */
export function ledgerSink(ledger: LedgerWriter, keep: readonly string[]): (event: LogEvent) => void {
  const wanted = new Set(keep);
  return (e) => {
    if (!wanted.has(e.event)) return;
    const { event, level: _level, time: _time, ...fields } = e;
    ledger.append("event", { event, ...fields });
  };
}
