import type { FanoutStatus } from "../../src/fanout/index.js";
import type { FakeClock } from "../../src/testing/index.js";
import type { SymbolFanoutApp } from "./app.js";
import type { PushOutcome } from "./push.js";

/**
 * Drives the fan-out round by round on a fake clock: jump to the next wake-up, run one `tick()`,
 * report what went out. The HTTP is real; only the waits between rounds (30 s to 15 min) are
 * skipped. Used by the tests, the demo and the benchmark.
 */

/** Every push's outcome, in order: give `record` to the app as `onPush`. */
export class PushLog {
  readonly outcomes: PushOutcome[] = [];
  readonly record = (outcome: PushOutcome): void => void this.outcomes.push(outcome);
}

export interface Round {
  /** The fake clock's time when the round ran. */
  at: number;
  /** Why it ran: "push" (a new state), "retry", "reconcile". */
  reason: FanoutStatus["nextReason"];
  /** The state version after the round. */
  version: number;
  pushes: PushOutcome[];
  failed: PushOutcome[];
  /**
   * Every target acknowledged the current version and none has a failed push waiting for its
   * retry. Stricter than `status.converged`: a target that fails a reconciliation push keeps the
   * version it acknowledged before, so the fan-out counts it converged while its retry is pending.
   */
  converged: boolean;
  nextAt: number | null;
  nextReason: FanoutStatus["nextReason"];
  /** Real time the tick took, in ms. */
  wallMs: number;
  status: FanoutStatus;
}

export interface RoundDriver {
  app: SymbolFanoutApp;
  clock: FakeClock;
  log: PushLog;
}

/** Runs the next round: at once if it is due, else after moving the clock to it. null: nothing is scheduled. */
export async function runRound({ app, clock, log }: RoundDriver): Promise<Round | null> {
  const before = await app.symbols.status();
  if (before.nextAt === null) return null;
  if (before.nextAt > clock.now()) await clock.set(before.nextAt);
  const at = clock.now();
  const from = log.outcomes.length;
  const started = performance.now();
  await app.tw.tick();
  const wallMs = performance.now() - started;
  const pushes = log.outcomes.slice(from);
  const status = await app.symbols.status();
  return {
    at,
    reason: before.nextReason,
    version: status.version,
    pushes,
    failed: pushes.filter((p) => p.result !== "ok"),
    converged: status.converged && status.targets.every((t) => t.failures === 0),
    nextAt: status.nextAt,
    nextReason: status.nextReason,
    wallMs,
    status,
  };
}

/** Runs rounds until every target has the current version; throws after `maxRounds`. */
export async function runUntilConverged(driver: RoundDriver, options: { maxRounds?: number; onRound?: (round: Round) => void } = {}): Promise<Round[]> {
  const maxRounds = options.maxRounds ?? 20;
  const rounds: Round[] = [];
  while (rounds.length < maxRounds) {
    const round = await runRound(driver);
    if (!round) throw new Error("the fan-out has nothing scheduled and has not converged");
    rounds.push(round);
    options.onRound?.(round);
    if (round.converged) return rounds;
  }
  throw new Error(`not converged after ${maxRounds} rounds`);
}
