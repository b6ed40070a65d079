import type { Clock, TimerHandle } from "../core/clock.js";
import { errorText } from "../core/errors.js";
import type { LogEvent, LogLevel, Logger } from "../core/logger.js";
import type { Delivery } from "../delivery/delivery.js";
import { HELD_EVENT, type Notification } from "./notification.js";
import type { NotifyConfig } from "./options.js";
import { RateWindow } from "./rate-window.js";
import type { NotifySink } from "./sinks.js";
import { eventText, heldText, type HeldBack } from "./text.js";

export interface NotifierDeps {
  clock: Clock;
  logger: Logger;
  /**
   * Whether a delivery is a notifier's outbox. What happens to a notification never notifies: a
   * channel that is down would otherwise feed itself (its dropped item notifying it again).
   */
  isOutbox(delivery: string): boolean;
}

export interface NotifySinkStatus {
  kind: NotifySink["kind"];
  /** The sink's outbox: `tw.deliveries.get(delivery)` shows what waits there, its retries and dead letters. */
  delivery: string;
  /** Notifications let through in the current rate-limit window. */
  sentInWindow: number;
  /** What the rate limit holds back, by event, for the next notification to summarise. */
  held: HeldBack[];
}

export interface NotifierStatus {
  events: string[];
  rateLimit: { max: number; per: number };
  sinks: NotifySinkStatus[];
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, critical: 4 };

interface SinkUnit {
  kind: NotifySink["kind"];
  delivery: Delivery<Notification>;
  window: RateWindow;
  /** Notifications whose outbox write failed (the store did), written again at `rewriteAt`. */
  unwritten: Notification[];
  rewriteAt: number | null;
}

/** How soon a failed outbox write is tried again: a store blip passes, a store that is down is not hammered. */
const REWRITE_MS = 5_000;
/**
 * Notifications kept in memory per sink while the store refuses them. An outage longer than this
 * many notifications (at the rate limit's pace) keeps the newest; each one it lets go is logged.
 */
const MAX_UNWRITTEN = 1_000;

/**
 * Turns observed log events into notifications: each event it watches for becomes one item in
 * each sink's outbox (a delivery), so it is durable once written and retried with backoff when
 * the endpoint fails, and the code that logged the event never waits for it. Each sink has its
 * own rate limit; what it holds back is counted and summarised by the next notification, or by a
 * summary of its own as soon as the window has room (a tick, or a timer while the engine runs).
 */
export class Notifier {
  private readonly sinks: SinkUnit[];
  /** Outbox writes in flight: a tick waits for them before its sends, a stop before the store closes. */
  private readonly writes = new Set<Promise<void>>();
  private written = 0;
  private timer: TimerHandle | undefined;
  private active = false;
  private closed = false;
  /** Set while the notifier logs its own trouble, so that event cannot come back to it. */
  private logging = false;
  private readonly unobserve: () => void;

  /** @internal use `tw.notify(options)`, which checks the options and declares the outboxes. */
  constructor(
    private readonly config: NotifyConfig,
    deliveries: readonly Delivery<Notification>[],
    private readonly deps: NotifierDeps,
  ) {
    this.sinks = deliveries.map((delivery, i) => ({ kind: config.sinks[i]!.sink.kind, delivery, window: new RateWindow(config.rateLimit.max, config.rateLimit.per), unwritten: [], rewriteAt: null }));
    this.unobserve = deps.logger.observe((event) => this.observe(event));
  }

  /** Each sink's outbox, in the order the sinks were given. */
  get deliveries(): Delivery<Notification>[] {
    return this.sinks.map((s) => s.delivery);
  }

  status(): NotifierStatus {
    const now = this.deps.clock.now();
    return {
      events: [...this.config.events],
      rateLimit: { ...this.config.rateLimit },
      sinks: this.sinks.map((s) => ({ kind: s.kind, delivery: s.delivery.name, ...s.window.status(now) })),
    };
  }

  /**
   * @internal writes what is due: notifications a failed write left in memory, and summaries whose
   * window has room again; resolves once written.
   */
  async flushDue(): Promise<void> {
    if (this.closed) return;
    const now = this.deps.clock.now();
    for (const sink of this.sinks) {
      if (sink.rewriteAt !== null && sink.rewriteAt <= now) this.write(sink, this.takeUnwritten(sink));
      if (sink.window.holding && sink.window.admit(now)) this.write(sink, [this.summary(sink.window.takeHeld(), now)]);
    }
    await this.settle();
    this.arm();
  }

  /** @internal when a held-back summary can next go out, or a failed write be tried again; null if neither. */
  nextAt(): number | null {
    const now = this.deps.clock.now();
    const times = this.sinks.flatMap((s) => [s.window.summaryAt(now), s.rewriteAt]).filter((at) => at !== null);
    return times.length ? Math.min(...times) : null;
  }

  /** @internal waits for the outbox writes in flight; returns how many were written since the last call. */
  async settle(): Promise<number> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
    const written = this.written;
    this.written = 0;
    return written;
  }

  /** @internal the engine runs continuously: summaries go out on a timer, not only in ticks. */
  start(): void {
    this.active = true;
    this.arm();
  }

  /**
   * @internal no more events are taken. What the rate limit still holds is written as a last
   * summary, past the limit, rather than lost with the process: the next engine on the store sends
   * it. So are the notifications a failed write left in memory, one last time.
   */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.active = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.deps.clock.now();
    for (const sink of this.sinks) {
      const last = [...this.takeUnwritten(sink), ...(sink.window.holding ? [this.summary(sink.window.takeHeld(), now)] : [])];
      if (last.length) this.write(sink, last);
    }
    this.closed = true;
    this.unobserve();
    await this.settle();
  }

  private observe(event: LogEvent): void {
    if (this.closed || this.logging || !this.config.events.has(event.event)) return;
    const delivery = event["delivery"];
    if (typeof delivery === "string" && this.deps.isOutbox(delivery)) return;
    // A fan-out never gives up, so it has no "failed for good" event: it is stuck once this many
    // rounds in a row failed, and notifies once per such spell (the count starts over on success).
    if (event.event === "fanout.retry_scheduled" && event["consecutiveFailures"] !== this.config.fanoutStuckAfter) return;
    const now = this.deps.clock.now();
    const { event: name, level, time, ...fields } = event;
    const notification: Notification = { event: name, level, time, text: eventText(event), fields: plainFields(fields) };
    for (const sink of this.sinks) {
      if (!sink.window.admit(now)) {
        sink.window.hold(name, level, now);
        continue;
      }
      const held = sink.window.takeHeld();
      this.write(sink, [held.length ? { ...notification, text: `${notification.text}\n${heldText(held, this.config.rateLimit)}`, held } : notification]);
    }
    this.arm();
  }

  /** A notification of what was held back alone, at the level of the gravest event in it. */
  private summary(held: HeldBack[], now: number): Notification {
    const level = held.reduce<LogLevel>((top, h) => (RANK[h.level] > RANK[top] ? h.level : top), "debug");
    return { event: HELD_EVENT, level, time: now, text: heldText(held, this.config.rateLimit), fields: { rateLimit: { ...this.config.rateLimit } }, held };
  }

  private write(sink: SinkUnit, notifications: Notification[]): void {
    const write: Promise<void> = sink.delivery
      .emit(notifications.map((payload) => ({ payload })))
      .then(
        () => void (this.written += notifications.length),
        (error: unknown) => this.writeFailed(sink, notifications, error),
      )
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  /** The store refused a write: the notifications wait in memory and are written again in a few seconds. */
  private writeFailed(sink: SinkUnit, notifications: Notification[], error: unknown): void {
    sink.unwritten.push(...notifications);
    // Once stopped there is no later write: all of it is lost.
    const lost = sink.unwritten.splice(0, this.closed ? sink.unwritten.length : Math.max(0, sink.unwritten.length - MAX_UNWRITTEN));
    sink.rewriteAt ??= this.deps.clock.now() + REWRITE_MS;
    this.logging = true;
    try {
      const fields = { operation: "notify", delivery: sink.delivery.name, waiting: sink.unwritten.length, error: errorText(error) };
      this.deps.logger.error("store.error", fields);
      // What memory cannot keep is lost: logged in full, where the logs keep it.
      for (const n of lost) this.deps.logger.error("store.error", { ...fields, lost: n.text });
    } finally {
      this.logging = false;
    }
    this.arm();
  }

  private takeUnwritten(sink: SinkUnit): Notification[] {
    sink.rewriteAt = null;
    return sink.unwritten.splice(0);
  }

  /** While the engine runs continuously, a timer brings the next held-back summary. */
  private arm(): void {
    if (!this.active) return;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const at = this.nextAt();
    if (at === null) return;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      void this.flushDue();
    }, Math.max(0, at - this.deps.clock.now()));
  }
}

/**
 * The event's fields as plain JSON, whatever a caller logged: errors as their text, bigints as
 * strings; a value JSON cannot hold at all (a cycle) as its String form. A notification is written
 * to the outbox as JSON, and a field it cannot hold must not cost the notification.
 */
function plainFields(fields: Record<string, unknown>): Record<string, unknown> {
  const replacer = (_key: string, value: unknown): unknown => (value instanceof Error ? errorText(value) : typeof value === "bigint" ? String(value) : value);
  try {
    return JSON.parse(JSON.stringify(fields, replacer) ?? "{}") as Record<string, unknown>;
  } catch {
    return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, typeof value === "string" ? value : String(value)]));
  }
}
