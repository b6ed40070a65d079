import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import * as z from "zod";
import { type Logger } from "../../src/index.js";
import { DuplicateRequestError, IdempotencyKeyReuseError } from "../../src/idempotency/index.js";
import type { RefusalCode } from "./ledger.js";
import type { Market } from "./market.js";
import type { Answer, Portfolio } from "./portfolio.js";

/**
 * The HTTP API, a Hono app. Every mutating call needs an `Idempotency-Key` header (the seed's
 * requestId): a repeat of a completed request gets the first answer again, with
 * `Idempotent-Replayed: true`; a repeat while the first is still running gets 409; the key reused
 * with another body gets 422. Errors are `application/problem+json`.
 *
 *   POST /accounts                              {"owner":"alice","startingBalanceCents":2000000}   201
 *   POST /accounts/:id/deposits                 {"amountCents":500000}                             201
 *   POST /accounts/:id/positions                {"symbol":"ETH","quantity":2}                      201
 *   POST /accounts/:id/positions/:pid/close                                                        200
 *   POST /accounts/:id/orders                   {"symbol":"STX","quantity":1000,"limitPriceCents":190}  201
 *   POST /accounts/:id/reset                    {} or {"startingBalanceCents":...}                 201
 *   GET  /accounts/:id     GET /market
 *
 * Why not the `idempotencyKey` middleware from tickwork/hono (README: the choice): it caches the
 * HTTP response of anything below 500, so a refused order (422 insufficient balance) would be
 * replayed after the client topped up; seed 002 deletes the key on a business failure. And RESET
 * needs `claimScope`, which the middleware does not take. Calling `run` in the portfolio keeps the
 * cached value the business result, and the same operations work without HTTP.
 */

export interface ApiOptions {
  portfolio: Portfolio;
  market: Market;
  logger: Logger;
}

const MAX_KEY_LENGTH = 255;
const ACCOUNT_ID = /^acc_[0-9a-f]{10}$/;
const POSITION_ID = /^pos_[0-9a-f]{10}$/;

const symbol = z.string().regex(/^[A-Z]{2,10}$/, "a symbol is 2-10 capital letters, e.g. ETH");
const quantity = z.number().int("quantity is a whole number of units").positive().max(1_000_000);
/** Up to $10M a unit and 1M units keep every amount well inside JavaScript's exact integers. */
const priceCents = z.number().int("prices are whole cents").positive().max(1_000_000_000);
const balanceCents = z.number().int("amounts are whole cents").positive().max(100_000_000_000);

const CreateAccount = z.object({ owner: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "owner is 1-64 of a-z, 0-9, '_' and '-'"), startingBalanceCents: balanceCents.optional() }).strict();
const Deposit = z.object({ amountCents: balanceCents }).strict();
const OpenPosition = z.object({ symbol, quantity }).strict();
const LimitOrder = z.object({ symbol, quantity, limitPriceCents: priceCents, side: z.literal("buy").default("buy") }).strict();
const Reset = z.object({ startingBalanceCents: balanceCents.optional() }).strict();
const NoBody = z.object({}).strict();

const REFUSAL_STATUS: Record<RefusalCode, ContentfulStatusCode> = {
  UNKNOWN_ACCOUNT: 404,
  UNKNOWN_POSITION: 404,
  ACCOUNT_REPLACED: 409,
  ACCOUNT_EXISTS: 409,
  POSITION_CLOSED: 409,
  UNKNOWN_SYMBOL: 422,
  INSUFFICIENT_BALANCE: 422,
};

export function createApi({ portfolio, market, logger }: ApiOptions): Hono {
  const app = new Hono();

  // Unknown-looking ids are answered before any key is claimed under them.
  app.use("/accounts/:id/*", async (c, next) => (ACCOUNT_ID.test(c.req.param("id")) ? next() : noAccount(c)));
  app.use("/accounts/:id", async (c, next) => (ACCOUNT_ID.test(c.req.param("id")) ? next() : noAccount(c)));

  app.post("/accounts", mutation(CreateAccount, 201, (_c, key, body) => portfolio.createAccount(key, body)));
  app.post("/accounts/:id/deposits", mutation(Deposit, 201, (c, key, body) => portfolio.deposit(c.req.param("id")!, key, body)));
  app.post("/accounts/:id/positions", mutation(OpenPosition, 201, (c, key, body) => portfolio.openPosition(c.req.param("id")!, key, body)));
  app.post("/accounts/:id/positions/:pid/close", async (c, next) => (POSITION_ID.test(c.req.param("pid")) ? next() : problem(c, 404, "unknown-position", "No such position", `There is no position ${c.req.param("pid")}.`)));
  app.post("/accounts/:id/positions/:pid/close", mutation(NoBody, 200, (c, key) => portfolio.closePosition(c.req.param("id")!, key, c.req.param("pid")!)));
  app.post("/accounts/:id/orders", mutation(LimitOrder, 201, (c, key, { symbol, quantity, limitPriceCents }) => portfolio.placeLimitOrder(c.req.param("id")!, key, { symbol, quantity, limitPriceCents })));
  app.post("/accounts/:id/reset", mutation(Reset, 201, (c, key, body) => portfolio.resetAccount(c.req.param("id")!, key, body)));

  app.get("/accounts/:id", async (c) => {
    const account = await portfolio.getAccount(c.req.param("id"));
    return account ? c.json(account) : noAccount(c);
  });
  app.get("/market", (c) => c.json({ pricesCents: market.snapshot() }));

  app.notFound((c) => problem(c, 404, "not-found", "Not found", `No route for ${c.req.method} ${c.req.path}.`));
  app.onError((error, c) => {
    logger.error("api.error", { method: c.req.method, path: c.req.path, error: error.message });
    return problem(c, 500, "internal-error", "Internal error", "The request failed; see the server's logs. Retrying with the same Idempotency-Key is safe.");
  });
  return app;
}

/**
 * A mutating route: the key and the body are checked first (a 400 claims nothing), then the
 * portfolio's operation runs under the key and its outcome becomes the response.
 */
function mutation<S extends z.ZodType>(schema: S, status: ContentfulStatusCode, run: (c: Context, key: string, body: z.output<S>) => Promise<Answer<object>>) {
  return async (c: Context) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined) return problem(c, 400, "idempotency-key-missing", "Idempotency-Key required", "Every change takes an Idempotency-Key header: a new random id per request, the same one on its retries.");
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) return problem(c, 400, "idempotency-key-invalid", "Invalid Idempotency-Key", `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} characters long.`);
    const text = await c.req.text();
    let json: unknown = {};
    if (text.trim() !== "") {
      try {
        json = JSON.parse(text);
      } catch {
        return problem(c, 400, "invalid-body", "Invalid body", "The body must be JSON.");
      }
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
      return problem(c, 400, "invalid-body", "Invalid body", issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), { issues });
    }
    let answer: Answer<object>;
    try {
      answer = await run(c, key, parsed.data);
    } catch (error) {
      if (error instanceof DuplicateRequestError) {
        c.header("Retry-After", "1");
        return problem(c, 409, "idempotency-key-in-flight", "Request in progress", "A request with this Idempotency-Key is still being processed. Retry later.");
      }
      if (error instanceof IdempotencyKeyReuseError) {
        return problem(c, 422, "idempotency-key-reused", "Idempotency-Key reused", "This Idempotency-Key was already used with a different request.");
      }
      throw error;
    }
    const { outcome, replayed } = answer;
    if (!outcome.success) {
      return problem(c, REFUSAL_STATUS[outcome.error], outcome.error.toLowerCase().replaceAll("_", "-"), title(outcome.error), outcome.message, { error: outcome.error, ...outcome.details });
    }
    const { success: _success, ...body } = outcome;
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(body, status);
  };
}

function noAccount(c: Context): Response {
  return problem(c, 404, "unknown-account", "No such account", `There is no account ${c.req.param("id")}.`);
}

function problem(c: Context, status: ContentfulStatusCode, type: string, title: string, detail: string, extra: Record<string, unknown> = {}): Response {
  return c.body(JSON.stringify({ type: `urn:paper-orders:problem:${type}`, title, status, detail, ...extra }), status, { "content-type": "application/problem+json" });
}

function title(code: RefusalCode): string {
  const words = code.toLowerCase().replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Serves the app with @hono/node-server on 127.0.0.1 (port 0: any free port). */
export async function listen(app: Hono, options: { port?: number; hostname?: string } = {}): Promise<Listening> {
  const hostname = options.hostname ?? "127.0.0.1";
  // overrideGlobalObjects: false keeps the process's own Request and Response, which the demo's
  // client (fetch in the same process) shares.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
