/**
 * `npm run chaos`: tickwork's own chaos suite. Real worker processes, a real producer, faults injected
 * from outside (SIGKILL, SIGSTOP, PostgreSQL restarts and immediate stops, terminated backends,
 * exhausted pools), and a ledger of every execution that the verdict is drawn from. Prints per
 * scenario and store: what went through, the faults, lost (must be 0), re-runs and whether each is
 * inside the documented window, recovery times and duration; exits 1 on any loss, unexplained
 * re-run or broken scenario, 2 on a usage error. See chaos/README.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import Database from "better-sqlite3";
import { ownCluster, urlServer, type PgServer } from "./cluster.js";
import { parseSettings, UsageError, USAGE, type Settings } from "./options.js";
import { formatReport, passed, type ScenarioReport } from "./report.js";
import { openEnvironment, removeDir, type Environment } from "./scenarios/environment.js";
import { scenarios } from "./scenarios/index.js";
import { spread } from "./stats.js";
import { RULES } from "./verdict/rules.js";

const log = (line: string) => process.stdout.write(`${line}\n`);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

function machine(): string {
  const sqliteVersion = (new Database(":memory:").prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  return `${cpus().length} cores (${cpus()[0]?.model.trim() ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.versions.node}, SQLite ${sqliteVersion} (WAL, synchronous NORMAL)`;
}

function summaryTable(reports: readonly ScenarioReport[]): string {
  const rows = reports.map((r) => {
    const faults = Object.values(r.faults).reduce((a, b) => a + b, 0);
    const rec = r.recovery[0];
    return [
      r.scenario,
      r.store,
      r.skipped ? "skipped" : String(faults),
      r.skipped ? "" : String(r.lost),
      r.skipped ? "" : `${r.reruns}${r.unexplained.length ? ` (${r.unexplained.length} unexplained)` : ""}`,
      r.skipped ? "" : String(r.doubleCompletions),
      rec ? `${rec.label.split(" → ")[0]}→ ${spread(rec.ms).replace(/ \(n=\d+\)/, "")}` : "",
      r.skipped ? "" : `${(r.durationMs / 1000).toFixed(1)} s`,
      passed(r) ? (r.skipped ? "skip" : "PASS") : "FAIL",
    ];
  });
  const header = ["scenario", "store", "faults", "lost", "re-runs", "double", "recovery", "time", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

async function main(settings: Settings): Promise<number> {
  const runTag = `${process.pid}${Date.now().toString(36).slice(-4)}`;
  const startedAt = Date.now();
  log(`tickwork chaos ${settings.quick ? "(quick)" : "(full)"}: seed ${settings.seed}, ${new Date().toISOString()}`);
  log(`machine: ${machine()}; load average at start ${loadavg()}`);
  log(`command: npm run chaos -- ${process.argv.slice(2).join(" ")}`.trimEnd());
  log(RULES);
  log("");

  let server: PgServer | undefined;
  const reports: ScenarioReport[] = [];
  let index = 0;
  try {
    for (const name of settings.scenarios) {
      const scenario = scenarios[name];
      for (const store of settings.stores) {
        index++;
        const storeName = store === "postgres" ? "postgres" : "sqlite";
        if (!scenario.stores.includes(store)) continue;
        if (store === "postgres" && !server) {
          server = settings.databaseUrl ? urlServer(settings.databaseUrl) : await ownCluster(settings.port, log);
          log(`PostgreSQL: ${server.description}\n`);
        }
        if (scenario.ownCluster && store === "postgres" && !server!.own) {
          const skip: ScenarioReport = { ...emptyFor(name, storeName), skipped: "it restarts and stops the server, so it needs the run's own cluster (unset CHAOS_DATABASE_URL)" };
          reports.push(skip);
          log(formatReport(skip));
          continue;
        }
        log(`running ${name} on ${storeName} (load average ${loadavg()}) ...`);
        let report: ScenarioReport;
        let env: Environment | undefined;
        try {
          env = await openEnvironment(name, store, settings, store === "postgres" ? server : undefined, runTag, index, log);
          report = await scenario.run(env);
        } catch (error) {
          report = { ...emptyFor(name, storeName), error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
        }
        if (store === "postgres") report.store = server!.own ? "postgres (own cluster)" : "postgres (URL)";
        if (env) {
          const opened = env;
          await opened.close().catch((error: unknown) => report.notes.push(`cleanup: ${String(error)}`));
          if (passed(report)) removeDir(opened);
          else report.notes.push(`ledger and database kept in ${opened.dir}`);
        }
        reports.push(report);
        log(formatReport(report));
        log("");
      }
    }
  } finally {
    await server?.close().catch((error: unknown) => log(`closing PostgreSQL: ${String(error)}`));
  }

  const ok = reports.every(passed);
  log("Summary");
  log(summaryTable(reports));
  log(`\n${reports.filter((r) => !r.skipped).length} runs in ${((Date.now() - startedAt) / 1000).toFixed(0)} s; load average at end ${loadavg()}; seed ${settings.seed}`);
  log(ok ? "chaos: PASS (0 lost, every re-run inside the documented window)" : "chaos: FAIL (see the scenarios marked FAIL above)");
  if (settings.json) writeFileSync(settings.json, `${JSON.stringify({ settings, machine: machine(), reports, ok }, null, 2)}\n`);
  return ok ? 0 : 1;
}

function emptyFor(scenario: string, store: string): ScenarioReport {
  return { scenario, store, settings: "", items: "", faults: {}, lost: 0, lostDetails: [], reruns: 0, explained: {}, unexplained: [], doubleCompletions: 0, recovery: [], failures: [], notes: [], durationMs: 0 };
}

let settings: Settings | "help";
try {
  settings = parseSettings(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`chaos: ${error.message}\n${USAGE}\n`);
  process.exit(2);
}
if (settings === "help") {
  log(USAGE);
  process.exit(0);
}
// Ctrl-C: the exit handlers stop the run's own cluster; the processes end with their IPC channel.
process.on("SIGINT", () => process.exit(130));
process.on("SIGTERM", () => process.exit(143));
process.exit(await main(settings));
