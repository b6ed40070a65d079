import type { Clock, TimerHandle } from "../../core/clock.js";
import type { Job } from "../job.js";
import type { HandedJobs, SlotOffers } from "../store/store.js";

/**
 * How long an offer of slots stands unless renewed. A worker that dies with slots offered strands the
 * jobs enqueued into them until their leases lapse: the offer must lapse soon after it.
 */
export const OFFER_MS = 2_000;

/** Slots a worker offers at most: a hand-off's notification carries an id and a number per slot, within PostgreSQL's 8,000 bytes. */
export const MAX_OFFERED = 200;

/**
 * How long an id handed to this worker is remembered: a notification and a renewal's look for jobs
 * written for the worker may both bring a job, a few milliseconds apart; the one that comes second
 * must not start it again, even once it has ended.
 */
const SEEN_MS = 10_000;

export interface OfferDeps {
  offers: SlotOffers;
  clock: Clock;
  queue: string;
  workerId: string;
  leaseMs: number;
  maxAttempts: number | null;
  /** Slots free now for jobs not yet in hand (running, prefetched or promised). */
  free: () => number;
  /**
   * The worker holds the job (running, prefetched, or its outcome not yet written): it is never
   * taken twice. Asked again once a read of handed jobs is back: a job whose outcome was written
   * before the read is not running in it, and one whose outcome was not is still held.
   */
  holds: (id: string) => boolean;
  /** Jobs handed to this worker, written running under its lease: it holds them from now on. */
  take: (jobs: Job[]) => void;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * An idle worker's offer of its free slots to the enqueues of other processes (see SlotOffers): a job
 * enqueued anywhere into one of them is written claimed by this worker and its id sent here, so it
 * starts after the insert and a notification, without a claim. Open while the worker is idle (its
 * last claim found nothing more), topped up as its jobs end and as it hears of slots taken, renewed
 * every half OFFER_MS; closed, the offer is neither renewed nor topped up, and lapses. At most one of
 * its statements is on its way at a time.
 */
export class SlotOffer {
  private open = false;
  /** Slots offered and not taken, as far as this worker has heard. */
  private readonly offered = new Set<number>();
  /** Slots free to offer: never offered, taken and heard of, or lapsed. */
  private readonly spare: number[] = [];
  /** The next offer withdraws every slot but its own (it reopens: what was offered before may have lapsed). */
  private instead = true;
  private sending: Promise<void> | null = null;
  private again = false;
  private renewTimer: TimerHandle | undefined;
  private readonly seen = new Map<string, number>();
  private readonly reads = new Set<Promise<void>>();
  /** Ids being read: handed, not yet held. */
  private reading = 0;
  private stopped = false;

  constructor(private readonly deps: OfferDeps) {
    for (let slot = MAX_OFFERED; slot >= 1; slot--) this.spare.push(slot);
  }

  /** The worker is idle: its free slots are offered (or topped up). Cheap when nothing changed. */
  idle(): void {
    if (this.stopped) return;
    if (!this.open) {
      this.open = true;
      this.instead = true;
      for (const slot of this.offered) this.spare.push(slot);
      this.offered.clear();
    }
    this.sync();
  }

  /** The worker is behind (it claimed a backlog), paused or stopping: the offer lapses unless it is idle again. */
  busy(): void {
    this.open = false;
    this.clearRenew();
  }

  /** A notification: jobs enqueued into this worker's slots, which it takes unless it has already. */
  received({ slots, ids, jobs }: HandedJobs): void {
    for (const slot of slots) {
      if (this.offered.delete(slot)) this.spare.push(slot);
    }
    const fresh = this.unseen(ids);
    if (jobs) {
      this.markSeen(fresh);
      const taken = jobs.filter((job) => fresh.includes(job.id));
      if (taken.length) this.deps.take(taken);
    } else {
      this.read(fresh);
    }
    if (this.open) this.sync();
  }

  /** The notifications may have been lost (the listening connection dropped): look for jobs handed here. */
  lookAgain(): void {
    if (this.open) void this.renew();
  }

  /**
   * Withdraws the offer; answers the jobs handed here that this worker had not heard of, which the
   * caller hands back.
   */
  async stop(): Promise<Job[]> {
    this.stopped = true;
    this.busy();
    await this.sending;
    await Promise.all(this.reads);
    const { offers, queue, workerId } = this.deps;
    try {
      const mine = await offers.withdraw({ queue, workerId });
      return await offers.handed({ ids: this.unseen(mine), workerId });
    } catch (error) {
      this.deps.storeError("offer", error);
      return [];
    }
  }

  /** Withdraws offered slots beyond what is free now (the worker took jobs some other way). */
  fit(): void {
    if (this.open && !this.stopped && this.offered.size > this.free()) this.sync();
  }

  private free(): number {
    return Math.max(0, this.deps.free() - this.reading);
  }

  private sync(): void {
    if (this.sending) {
      this.again = true;
      return;
    }
    const free = this.free();
    if (this.offered.size > free) {
      // More offered than free: the excess is withdrawn, the rest offered again in place of all.
      this.instead = true;
      for (const slot of [...this.offered].slice(free)) {
        this.offered.delete(slot);
        this.spare.push(slot);
      }
    }
    const want = Math.min(free - this.offered.size, this.spare.length);
    // Topped up once half of what is free is no longer offered: a statement per few jobs rather than per job.
    if (!this.instead && (want <= 0 || this.offered.size > free / 2)) {
      this.armRenew();
      return;
    }
    this.sending = this.send(this.spare.splice(this.spare.length - Math.max(want, 0))).finally(() => {
      this.sending = null;
      if (this.again && this.open) {
        this.again = false;
        this.sync();
      }
    });
  }

  /** Offers `more` slots; in place of every other slot of the worker (but those it still offers) when `instead` is set. */
  private async send(more: number[]): Promise<void> {
    const { offers, clock, queue, workerId, leaseMs, maxAttempts } = this.deps;
    const instead = this.instead;
    this.instead = false;
    // Counted as offered from the start: a notification of one taken may come before the answer.
    for (const slot of more) this.offered.add(slot);
    const slots = instead ? [...this.offered] : more;
    try {
      await offers.offer({ queue, workerId, slots, until: clock.now() + OFFER_MS, leaseMs, maxAttempts, instead });
      this.armRenew();
    } catch (error) {
      this.instead = true;
      this.deps.storeError("offer", error);
    }
  }

  private armRenew(): void {
    if (this.renewTimer || !this.open || this.stopped) return;
    this.renewTimer = this.deps.clock.setTimeout(() => {
      this.renewTimer = undefined;
      void this.renew();
    }, OFFER_MS / 2);
  }

  private clearRenew(): void {
    if (this.renewTimer) this.deps.clock.clearTimeout(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Renews the offer and starts any job handed here whose notification never came. */
  private async renew(): Promise<void> {
    if (!this.open || this.stopped) return;
    const { offers, clock, queue, workerId } = this.deps;
    try {
      const mine = await offers.renew({ queue, workerId, slots: [...this.offered], until: clock.now() + OFFER_MS });
      this.read(this.unseen(mine));
    } catch (error) {
      this.deps.storeError("offer", error);
    }
    this.armRenew();
  }

  /** Ids this worker has not taken yet; ids taken are forgotten after SEEN_MS. */
  private unseen(ids: string[]): string[] {
    const now = this.deps.clock.now();
    for (const [id, at] of this.seen) {
      if (now - at < SEEN_MS) break;
      this.seen.delete(id);
    }
    return ids.filter((id) => !this.seen.has(id) && !this.deps.holds(id));
  }

  private markSeen(ids: string[]): void {
    const now = this.deps.clock.now();
    for (const id of ids) this.seen.set(id, now);
  }

  /** Reads the jobs handed here by id and takes each once. */
  private read(ids: string[]): void {
    if (ids.length === 0 || this.stopped) return;
    this.markSeen(ids);
    this.reading += ids.length;
    const done = () => {
      this.reading -= ids.length;
      this.reads.delete(reading);
    };
    const reading: Promise<void> = this.deps.offers.handed({ ids, workerId: this.deps.workerId }).then(
      (jobs) => {
        done();
        const taken = jobs.filter((job) => !this.deps.holds(job.id));
        if (taken.length) this.deps.take(taken);
      },
      (error) => {
        done();
        this.deps.storeError("handed", error);
      },
    );
    this.reads.add(reading);
  }
}
