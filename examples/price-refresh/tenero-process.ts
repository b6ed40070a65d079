/**
 * One process of the shared-budget test: `node --import tsx tenero-process.ts '<TeneroProcessConfig JSON>'`.
 * Each role is a different caller of Tenero, on the system clock and one database, all drawing from
 * the one `tenero` limiter:
 *
 * - `prices`: the example's app, its price task every second over many tokens;
 * - `sweep`: a periodic task that prices every token again on each run (the volume sweep a
 *   leaderboard would run), every second;
 * - `jobs`: a queue of price lookups, one Tenero request per job, three at a time.
 *
 * Each of them alone asks for more than the budget. It prints JSON lines on stdout: the limiter's,
 * the HTTP client's and the tasks' events, and `fixture.ready`. The test ends it with SIGKILL.
 */
import { createTickwork, type LogEvent, type RateOptions } from "../../src/index.js";
import { RateLimitedError } from "../../src/http/index.js";
import { createPriceRefreshApp, createTeneroClient } from "./app.js";
import { openDatabase, type DatabaseTarget } from "./database.js";
import { priceKey } from "./prices.js";

export type TeneroRole = "prices" | "sweep" | "jobs";

export interface TeneroProcessConfig {
  role: TeneroRole;
  database: DatabaseTarget;
  teneroUrl: string;
  hiroUrl: string;
  /** The shared budget's settings: the same in every process. */
  limit: RateOptions;
  tokens: string[];
}

export const SWEEP_TASK = "tenero-volume-sweep";
export const LOOKUP_QUEUE = "tenero-lookups";
/** Jobs the `jobs` process enqueues at start: more than the test can spend. */
const LOOKUPS = 2_000;

// Started with an IPC channel: if the test process dies without ending this one, the channel
// closes and this process ends rather than run on as an orphan.
process.on("disconnect", () => process.exit(1));

const config = JSON.parse(process.argv[2] ?? "") as TeneroProcessConfig;
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

// Every request says when it left, a moment after the shared limiter let it go (the HTTP client
// calls fetch once it has taken a token): the test tells a request already on its way when the
// budget was paused from one sent after the pause.
const sendingFetch = globalThis.fetch;
globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
  const headers = new Headers(init?.headers);
  headers.set("x-sent-at", String(Date.now()));
  return sendingFetch(input, { ...init, headers });
};
/** The events the test reads; a job's own lifecycle events would flood the pipe. */
const printed = /^(limiter\.|http\.|task\.|fixture\.)/;
const logger = (event: LogEvent) => {
  if (printed.test(event.event)) print({ ...event, role: config.role });
};
const userAgent = `tickwork-${config.role}`;

if (config.role === "prices") {
  const app = await createPriceRefreshApp({
    database: config.database,
    teneroUrl: config.teneroUrl,
    hiroUrl: config.hiroUrl,
    agents: [],
    baseTokens: config.tokens,
    cadence: { prices: "1s", sweep: "1h" },
    teneroLimit: config.limit,
    userAgent,
    logger,
    logLevel: "debug",
  });
  await app.tw.start();
} else {
  const { store } = await openDatabase(config.database);
  const tw = await createTickwork({ store, logger, logLevel: "debug", handleSignals: false, pollInterval: "200ms" });
  const { tenero } = createTeneroClient(tw, { url: config.teneroUrl, limit: config.limit, headers: { "user-agent": userAgent }, retry: { maxAttempts: 1 } });
  const price = (token: string, signal: AbortSignal) => tenero.get<{ price: number }>(`/v1/tokens/${encodeURIComponent(token)}/price`, { signal });

  if (config.role === "sweep") {
    tw.task(SWEEP_TASK, {
      every: "1s",
      immediately: true,
      async run(ctx) {
        let priced = 0;
        for (const token of config.tokens) {
          try {
            const res = await price(token, ctx.signal);
            await tw.cache.put(`sweep:${priceKey(token)}`, res.data.price);
            priced++;
          } catch (error) {
            if (!(error instanceof RateLimitedError)) throw error;
            ctx.backoffUntil(error.retryAfter);
            break;
          }
        }
        return { priced };
      },
    });
  } else {
    const lookups = tw.queue<{ token: string }>(LOOKUP_QUEUE, {
      concurrency: 3,
      // A 429 fails the attempt; the next one waits for the shared budget like every other call.
      retry: { maxAttempts: 100, backoff: () => 100 },
      handler: async (job, ctx) => (await price(job.payload.token, ctx.signal)).data.price,
    });
    await lookups.enqueueMany(Array.from({ length: LOOKUPS }, (_, i) => ({ payload: { token: config.tokens[i % config.tokens.length]! } })));
  }
  await tw.start();
}
print({ event: "fixture.ready", role: config.role, pid: process.pid });
