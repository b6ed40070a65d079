import { DurableObject } from "cloudflare:workers";
import { fanoutReceiver, type FanoutReceiver, type ReceiverStorage, type StateSource } from "../../src/fanout/index.js";
import { AlertPayload, CollectorPayload, STATIC_SYMBOL_INFO, type SymbolMetadata } from "../symbol-fanout/symbols.js";
import type { Env } from "./env.js";

/**
 * Seed 001's downstream objects. Each keeps the last pushed state in its own storage and falls back,
 * when none was ever pushed: a collector to the static symbol table, an alert to "allow all" (null).
 * An empty list is refused (a transient empty read upstream must not switch everything off).
 * `FAILING_RECEIVERS` (comma-separated names) makes receivers refuse every push: the tests' outage.
 */
abstract class SymbolReceiver<S> extends DurableObject<Env> {
  private readonly receiver: FanoutReceiver<S>;

  constructor(ctx: DurableObjectState, env: Env, options: { validate: (body: unknown) => S; fallback: S | null }) {
    super(ctx, env);
    const storage: ReceiverStorage<S> = { load: () => ctx.storage.get<S>("symbols"), save: (state) => ctx.storage.put("symbols", state) };
    this.receiver = fanoutReceiver({ ...options, storage });
  }

  async receiveSymbols(payload: unknown, version: number): Promise<{ version: number }> {
    if ((this.env.FAILING_RECEIVERS ?? "").split(",").includes(this.ctx.id.name ?? "")) throw new Error(`${this.ctx.id.name} is down`);
    await this.receiver.receive(payload);
    return { version };
  }

  async symbols(): Promise<{ state: S | null; source: StateSource }> {
    return this.receiver.current();
  }
}

type DurableObjectState = ConstructorParameters<typeof DurableObject>[0];

export class PriceCollectorDO extends SymbolReceiver<SymbolMetadata[]> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { validate: (body) => CollectorPayload.parse(body), fallback: [...STATIC_SYMBOL_INFO] });
  }
}

export class PriceAlertDO extends SymbolReceiver<string[]> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { validate: (body) => AlertPayload.parse(body), fallback: null });
  }
}
