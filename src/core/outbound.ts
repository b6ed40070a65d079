import { OutboundBudget } from "./budget.js";
import type { Clock, TimerHandle } from "./clock.js";
import { errorText } from "./errors.js";
import type { Logger } from "./logger.js";

/**
 * How soon the engine comes back while work is carried over: soon enough that a backlog of 10,000
 * items at 500 per tick drains in about two seconds, late enough that a tick's sends have answered.
 */
export const CARRY_WAKE_MS = 100;

export interface OutboundResult {
  /** Calls made in this pass, out of `budget`. */
  used: number;
  budget: number;
  /** Retries sent in this pass, out of `retryBudget`. */
  retries: number;
  retryBudget: number;
  /** Work was left for the next pass because the budget ran out. */
  carried: boolean;
  /** When the next retry, push or reconciliation is due; null if none. */
  nextAt: number | null;
}

/** A unit that makes outbound calls (a delivery, a fan-out): one pass spends what it may of the budget. */
export interface OutboundUnit {
  readonly name: string;
  pass(budget: OutboundBudget): Promise<{ carried: boolean; nextAt: number | null }>;
}

/**
 * Units that call out (deliveries and fan-outs) share one outbound budget per pass. `tick()` runs one pass; `start()`
 * runs them continuously: again in 100 ms while work is carried, at the next due time otherwise,
 * at once on an emit or push in this process, and at least every `pollMs` (emits by other processes).
 */
export class Outbound {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private active = false;

  constructor(
    private readonly deps: {
      clock: Clock;
      logger: Logger;
      budget: number;
      /** Retries per pass, shared by every unit, within `budget`. */
      retryBudget: number;
      pollMs: number;
      /** The units, in the order they spend the budget. */
      units: () => readonly OutboundUnit[];
      onError?: (error: unknown) => void;
    },
  ) {}

  /** One pass over the units in order. A store failure escapes; a receiver's failure is its item's. */
  async pass(): Promise<OutboundResult> {
    const budget = new OutboundBudget(this.deps.budget, this.deps.retryBudget);
    let carried = false;
    const times: number[] = [];
    for (const unit of this.deps.units()) {
      const result = await unit.pass(budget);
      carried ||= result.carried;
      if (result.nextAt !== null) times.push(result.nextAt);
    }
    return { used: budget.spent, budget: budget.total, retries: budget.retriesSpent, retryBudget: budget.retryTotal, carried, nextAt: times.length ? Math.min(...times) : null };
  }

  start(): void {
    if (this.deps.units().length === 0) return;
    this.active = true;
    this.passIn(0);
  }

  /** Something was emitted or pushed here: pass now rather than at the next due time. */
  wake(): void {
    if (!this.active) return;
    if (this.running) this.again = true;
    else this.passIn(0);
  }

  async stop(): Promise<void> {
    this.active = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    await this.running;
  }

  private passIn(ms: number): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      this.running = this.loop().finally(() => (this.running = undefined));
    }, ms);
  }

  private async loop(): Promise<void> {
    const { clock, logger, pollMs } = this.deps;
    let delay = pollMs;
    try {
      this.again = false;
      const result = await this.pass();
      if (result.carried || this.again) delay = result.carried ? CARRY_WAKE_MS : 0;
      else if (result.nextAt !== null) delay = Math.min(pollMs, Math.max(0, result.nextAt - clock.now()));
    } catch (error) {
      logger.error("store.error", { operation: "outbound", error: errorText(error) });
      this.deps.onError?.(error);
    }
    if (this.active) this.passIn(delay);
  }
}
