/**
 * Each example wired into the one-process demo: its fake upstreams (real HTTP on 127.0.0.1), its
 * declarations on the shared engine, and a little traffic so there is always something to see.
 * Every part returns a `stop()` that closes what it opened; the shared engine is stopped by the demo.
 */
import { randomBytes } from "node:crypto";
import { schedule, type Tickwork } from "../../src/index.js";
import { createAccountExtremesApp } from "../account-extremes/app.js";
import { priceTicks, trackedAccounts } from "../account-extremes/market.js";
import { startReceiver } from "../account-extremes/receiver.js";
import type { AppDatabase, DatabaseTarget } from "../support/database.js";
import { createSubscriptionsApp } from "../subscriptions/app.js";
import { startFakePaymentServer } from "../subscriptions/fake-payment-server.js";
import { insertSubscriptions, type NewSubscription } from "../subscriptions/subscriptions.js";
import { createPriceRefreshApp } from "../price-refresh/app.js";
import { startFakeHiro, swapTx, transferTx } from "../price-refresh/fake-hiro.js";
import { startFakeTenero } from "../price-refresh/fake-tenero.js";
import { createPaperOrdersApp } from "../paper-orders/app.js";
import { apiClient } from "../paper-orders/client.js";
import { createSymbolFanoutApp } from "../symbol-fanout/app.js";
import { randomFailures } from "../symbol-fanout/failures.js";
import { startFleet } from "../symbol-fanout/fleet.js";
import { DEMO_SYMBOLS } from "../symbol-fanout/symbols.js";

export interface Shared {
  /** A folder for the parts' own files (receivers' state). */
  dir: string;
  tw: Tickwork;
  db: AppDatabase;
  /** The SQLite file both are on (paper-orders opens its own engine on it: its ledger needs its own connection shape). */
  target: DatabaseTarget;
  /** Lines for the console. */
  say: (line: string) => void;
}

export interface Part {
  name: string;
  /** One line: what this part's upstreams are. */
  describe: string;
  /** Periodic traffic (new subscriptions, chain blocks, orders); started after the engine. */
  begin(): void;
  stop(): Promise<void>;
}

/** Seed 004: subscriptions falling due become payment jobs; the provider fails a share of charges, so retries show. */
export async function subscriptionsPart({ tw, db }: Shared): Promise<Part> {
  const server = await startFakePaymentServer({ failures: { serverError: 0.3, rateLimited: 0.08, cardDeclined: 0.03, lostResponse: 0.05 }, retryAfterSeconds: 1 });
  await createSubscriptionsApp({ shared: { tw, db }, paymentsUrl: server.url, retryBase: "1s", concurrency: 5, schedulerCadence: { every: "3s" } });
  let n = 0;
  const add = async (count: number) => {
    const now = tw.clock.now();
    const batch = Array.from({ length: count }, (_, i): NewSubscription => {
      n++;
      return { id: `sub-${String(n).padStart(4, "0")}`, payer: `payer-${n}`, amountCents: 500 + ((n * 737) % 4_500), interval: "monthly", nextDueAt: now - (i % 5) * 3_600_000 };
    });
    await insertSubscriptions(db, batch);
  };
  await add(20);
  let timer: NodeJS.Timeout | undefined;
  return {
    name: "subscriptions",
    describe: `payment provider ${server.url} (fails 30% with 500, 8% with 429, 3% declined, 5% lost answers)`,
    begin() {
      timer = setInterval(() => void add(4).catch(() => {}), 4_000);
    },
    async stop() {
      clearInterval(timer);
      await server.close();
    },
  };
}

/** Seed 003: the price refresh backs off when the fake Tenero's small budget runs out; the sweep reads a growing chain. */
export async function priceRefreshPart({ tw, db }: Shared): Promise<Part> {
  const tenero = await startFakeTenero({ minuteLimit: 10, windowMs: 20_000 });
  const hiro = await startFakeHiro();
  const agents = ["SP1AGENTALPHA", "SP2AGENTBRAVO", "SP3AGENTCHARLIE"];
  await createPriceRefreshApp({ shared: { tw, db }, teneroUrl: tenero.url, hiroUrl: hiro.url, agents, cadence: { prices: "5s", sweep: "10s" }, priceMaxAge: "20s", requestTimeout: "3s" });
  const tokens = ["leo", "odin", "pepe", "nothing"];
  let blocks = 0;
  let timer: NodeJS.Timeout | undefined;
  return {
    name: "price-refresh",
    describe: `fake Tenero ${tenero.url} (10 requests per 20 s window: the price task backs off until the reset), fake Hiro ${hiro.url}`,
    begin() {
      timer = setInterval(() => {
        blocks++;
        const token = tokens[Math.min(tokens.length - 1, Math.floor(blocks / 3))]!;
        hiro.addBlock([swapTx(agents[blocks % agents.length]!, { token_in: token, token_out: "stx", amount_in: 100 * blocks }), transferTx("SP9SOMEONEELSE")]);
      }, 3_000);
    },
    async stop() {
      clearInterval(timer);
      await Promise.all([tenero.close(), hiro.close()]);
    },
  };
}

/** Seed 002: a client places orders with Idempotency-Keys and repeats some of them; the repeats are replayed, not re-executed. */
export async function paperOrdersPart({ target, say }: Shared): Promise<Part> {
  const app = await createPaperOrdersApp({ database: target, logLevel: "warn", logger: () => {} });
  const server = await app.listen();
  const api = apiClient(server.url);
  const owner = `demo-${randomBytes(2).toString("hex")}`;
  const created = await api.post<{ accountId: string }>("/accounts", `create-${owner}`, { owner, startingBalanceCents: 10_000_000 });
  const account = `/accounts/${created.body.accountId}`;
  let n = 0;
  let replays = 0;
  let timer: NodeJS.Timeout | undefined;
  const trade = async () => {
    n++;
    const key = `order-${owner}-${n}`;
    const body = { symbol: ["ETH", "SOL", "STX"][n % 3]!, quantity: 1 + (n % 4) };
    const first = await api.post(`${account}/positions`, key, body);
    // Every third order is sent twice, as a client whose answer was lost would: the second is a replay.
    if (n % 3 === 0) {
      const again = await api.post(`${account}/positions`, key, body);
      if (again.replayed) replays++;
      if (replays === 1 && again.replayed) say(`paper-orders: order ${key} sent twice -> ${first.status}, then ${again.status} replayed (Idempotent-Replayed: true), executed once`);
    }
  };
  return {
    name: "paper-orders",
    describe: `paper-trading API ${server.url} (its own engine on the same file: idempotency keys by account scope)`,
    begin() {
      timer = setInterval(() => void trade().catch(() => {}), 2_500);
    },
    async stop() {
      clearInterval(timer);
      await app.stop();
    },
  };
}

/**
 * Seed 001: the registry's enabled symbols fanned out to 77 real HTTP receivers. A fifth of the
 * receivers fail their first push, so the first round leaves some behind and the 30 s retry brings
 * them all in; later, a symbol is toggled every minute and 3% of the pushes after the second fail.
 */
export async function symbolFanoutPart({ tw, db, dir, say }: Shared): Promise<Part> {
  const first = randomFailures({ seed: 7, rate: 0.2 });
  const later = randomFailures({ seed: 8, rate: 0.03 });
  const fleet = await startFleet({ storageDir: `${dir}/receivers`, failure: (receiver, n) => (n === 1 ? first(receiver, n) : n === 2 ? null : later(receiver, n)) });
  const app = await createSymbolFanoutApp({ tw, db, targets: fleet.targets });
  await app.registry.upsert(DEMO_SYMBOLS);
  let timer: NodeJS.Timeout | undefined;
  let toggles = 0;
  return {
    name: "symbol-fanout",
    describe: `${fleet.receivers.length} receivers (7 collectors, 70 alerts) on 127.0.0.1, a fifth failing their first push`,
    begin() {
      timer = setInterval(() => {
        const symbol = DEMO_SYMBOLS[toggles++ % DEMO_SYMBOLS.length]!.symbol;
        void app.registry
          .enabled()
          .then((enabled) => app.setEnabled(symbol, !enabled.some((s) => s.symbol === symbol) || enabled.length === 1))
          .then((r) => say(`symbol-fanout: ${r.symbol} ${r.enabled ? "enabled" : "disabled"} -> state v${r.version} pushed to 77 receivers`))
          .catch(() => {});
      }, 60_000);
    },
    async stop() {
      clearInterval(timer);
      await fleet.close();
    },
  };
}

const HOUR = 3_600_000;
const ACCOUNTS = 600;

/**
 * Seed 000: 600 tracked accounts; a market feed replays the last two days, one hour of ticks every
 * 3 s, so hours and days close while you watch: each closed hour emits 600 hourly callbacks (500 go
 * in the tick, 100 are carried 100 ms), each midnight 600 daily ones, to a receiver that verifies
 * signatures, upserts and fails 5% of calls. The retry steps are the seed's 1m..2h scaled down to
 * seconds so retries show in a demo.
 */
export async function accountExtremesPart({ tw, db, say }: Shared): Promise<Part> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const receiver = await startReceiver({ secret, failures: { error: 0.05 }, seed: 3 });
  const app = await createAccountExtremesApp({ tw, db, receiverUrl: receiver.url, secret, cadence: "2s", retry: schedule(["2s", "5s", "15s", "30s", "1m"]) });
  const today = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR;
  let fed = today - 2 * 24 * HOUR - 2 * HOUR;
  // Tracked since the replay's start, so the replayed hours are theirs.
  await app.tracker.track(trackedAccounts(ACCOUNTS, 1), fed);
  let timer: NodeJS.Timeout | undefined;
  let days = 0;
  const feedHour = async () => {
    if (fed + HOUR > Date.now()) return;
    const ticks = priceTicks({ seed: fed / HOUR, from: fed, to: fed + HOUR - 60_000, start: 100 + ((fed / HOUR) % 7) });
    await app.recordTicks(ticks);
    fed += HOUR;
    if (fed % (24 * HOUR) === HOUR && days++ < 2) say(`account-extremes: the feed passed midnight ${new Date(fed - HOUR).toISOString().slice(0, 10)}: ${ACCOUNTS} daily callbacks once every tracking has caught up`);
  };
  return {
    name: "account-extremes",
    describe: `${ACCOUNTS} accounts; callback receiver ${receiver.url} (verifies signatures, upserts, fails 5%); the feed replays two days, an hour every 3 s`,
    begin() {
      timer = setInterval(() => void feedHour().catch(() => {}), 3_000);
    },
    async stop() {
      clearInterval(timer);
      await receiver.close();
    },
  };
}
