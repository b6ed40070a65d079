import { InvalidInputError, describe } from "../core/errors.js";
import { EmptyStateError } from "./errors.js";
import { isEmptyState } from "./options.js";

/** Where a receiver keeps the last state it was pushed (a Durable Object's storage, a file), so a restart does not lose it. */
export interface ReceiverStorage<S> {
  load(): S | null | undefined | Promise<S | null | undefined>;
  save(state: S): void | Promise<void>;
}

export interface ReceiverOptions<S> {
  /** Checks a pushed body and returns the state (a zod schema's `parse` fits); throw to refuse it. */
  validate: (body: unknown) => S;
  storage: ReceiverStorage<S>;
  /** What to run on before any push or stored state exists (a static table shipped with the code, or null = allow all). */
  fallback: S | null;
  isEmpty?: (state: S) => boolean;
}

export type StateSource = "pushed" | "stored" | "default";

/**
 * The receiving side of a fan-out (a price collector or an alert checker that is pushed its
 * symbols): a pushed state is validated, an empty one refused (a transient empty read upstream must
 * not switch everything off), and kept durably; reads fall back from the pushed state to the stored
 * one to a static default, so a receiver never hard-fails for want of a push.
 */
export class FanoutReceiver<S> {
  private pushed: S | null = null;
  private stored: { state: S | null } | undefined;

  constructor(private readonly options: ReceiverOptions<S>) {}

  /** Validates and stores a pushed state; throws `InvalidInputError` or `EmptyStateError` (answer 400/422) and keeps the previous state. */
  async receive(body: unknown): Promise<S> {
    let state: S;
    try {
      state = this.options.validate(body);
    } catch (error) {
      // The message only: it may be answered to the pusher, and a stack trace is no business of theirs.
      throw new InvalidInputError(`pushed state refused: ${error instanceof Error ? error.message : describe(error)}`);
    }
    if ((this.options.isEmpty ?? isEmptyState)(state)) throw new EmptyStateError("pushed state refused");
    await this.options.storage.save(state);
    this.pushed = state;
    return state;
  }

  /** The state to run on and where it came from: pushed, else stored, else the default. */
  async current(): Promise<{ state: S | null; source: StateSource }> {
    if (this.pushed !== null) return { state: this.pushed, source: "pushed" };
    // Fail open: unreadable storage is treated as empty, so the receiver runs on its default rather
    // than stopping for want of a configuration.
    this.stored ??= { state: (await Promise.resolve().then(() => this.options.storage.load()).catch(() => null)) ?? null };
    if (this.stored.state !== null) return { state: this.stored.state, source: "stored" };
    return { state: this.options.fallback, source: "default" };
  }
}

export function fanoutReceiver<S>(options: ReceiverOptions<S>): FanoutReceiver<S> {
  return new FanoutReceiver(options);
}
