import { type Tickwork } from "../../src/index.js";
import { type Fanout } from "../../src/fanout/index.js";
import { TickworkObject, type DurableObjectContext } from "../../src/runtime/cloudflare/index.js";
import { SymbolRegistry } from "../symbol-fanout/registry.js";
import { CREATE_TABLES } from "../symbol-fanout/sql.js";
import { symbolNames, type RegistrySymbol, type SymbolMetadata } from "../symbol-fanout/symbols.js";
import { objectDatabase } from "./databases.js";
import { logLevel, type Env } from "./env.js";

export const REGISTRY_NAME = "v1";
export const REGIONS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc"] as const;
/** Seed 001's fleet: a PriceCollector per location, ten PriceAlerts per location (7 + 70). */
export const COLLECTORS = REGIONS.map((r) => `collector-${r}`);
export const ALERTS = REGIONS.flatMap((r) => Array.from({ length: 10 }, (_, i) => `alert-${r}-${i + 1}`));

/**
 * Seed 001's SymbolRegistry: the symbols table in this object's SQLite (the same SymbolRegistry code
 * as the Node example) and tickwork's fan-out pushing the enabled set to the 7 collectors (full
 * metadata) and 70 alerts (names only) over Workers RPC, all in parallel. A target that fails is
 * retried on 30s 1m 2m 5m 15m without holding back the others, and every 15 minutes the current
 * state is re-pushed to everyone (reconciliation); the version each target acknowledged is stored,
 * so a retry goes only to those behind, across evictions.
 */
export class SymbolRegistryDO extends TickworkObject<Env> {
  private registry: SymbolRegistry | undefined;
  private symbols: Fanout<SymbolMetadata[]> | undefined;

  constructor(ctx: DurableObjectContext, env: Env) {
    super(ctx, env, { logger: { binding: "LOGS", appId: "symbols" }, logLevel: logLevel(env) });
  }

  protected async setup(tw: Tickwork): Promise<void> {
    const db = objectDatabase(this.ctx.storage, "SymbolRegistryDO SQLite");
    await db.transaction(CREATE_TABLES.map((sql) => ({ sql })));
    const registry = (this.registry = new SymbolRegistry(db, () => tw.clock.now()));
    const { COLLECTOR, ALERT } = this.env;
    this.symbols = tw.fanout<SymbolMetadata[], string>("symbols", {
      groups: { collectors: { targets: COLLECTORS }, alerts: { targets: ALERTS, project: symbolNames } },
      send: (target, payload, ctx) =>
        ctx.group === "collectors"
          ? COLLECTOR.get(COLLECTOR.idFromName(target)).receiveSymbols(payload, ctx.version)
          : ALERT.get(ALERT.idFromName(target)).receiveSymbols(payload, ctx.version),
      state: () => registry.enabled(),
    });
  }

  /** Adds or replaces symbols (admin), then pushes the enabled set at the next alarm, armed now. */
  async upsertSymbols(symbols: RegistrySymbol[]): Promise<{ version: number; changed: boolean }> {
    return this.call(async () => {
      await this.registry!.upsert(symbols);
      return this.pushCurrent();
    });
  }

  /** Enables or disables one symbol (admin); the last enabled one cannot be disabled. */
  async setEnabled(symbol: string, enabled: boolean): Promise<{ version: number; changed: boolean }> {
    return this.call(async () => {
      await this.registry!.setEnabled(symbol, enabled);
      return this.pushCurrent();
    });
  }

  private async pushCurrent(): Promise<{ version: number; changed: boolean }> {
    const pushed = await this.symbols!.push(await this.registry!.enabled());
    if (pushed.changed) await this.arm(Date.now());
    return pushed;
  }
}
