import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A payment provider on 127.0.0.1 that fails on purpose, over real HTTP.
 *
 * `POST /charges` with an `Idempotency-Key` header and `{ subscriptionId, payer, amountCents, dueAt }`
 * charges once per key: a repeated key gets the original charge back (`replayed: true` and an
 * `Idempotent-Replayed: true` header, as Stripe answers), whatever failure would otherwise be drawn.
 * Failures come from a per-subscription script first (deterministic tests), then from random shares
 * (the demo).
 */
export type Reply =
  | { kind: "ok" }
  /** 500, nothing charged. */
  | { kind: "server_error" }
  /** 429 with `Retry-After` (seconds, or an HTTP date), nothing charged. */
  | { kind: "rate_limited"; retryAfter: string }
  /** 402 `card_declined`: retrying cannot help. */
  | { kind: "card_declined" }
  /** The charge is made, then the connection drops before the answer: the caller cannot know. */
  | { kind: "lost_response" };

export const reply = {
  ok: { kind: "ok" },
  serverError: { kind: "server_error" },
  rateLimited: (retryAfter: string | number): Reply => ({ kind: "rate_limited", retryAfter: String(retryAfter) }),
  cardDeclined: { kind: "card_declined" },
  lostResponse: { kind: "lost_response" },
} as const satisfies Record<string, Reply | ((...args: never[]) => Reply)>;

/** Shares of requests (0 to 1, summing to at most 1) that fail each way when nothing is scripted. */
export interface FailureShares {
  serverError?: number;
  rateLimited?: number;
  cardDeclined?: number;
  lostResponse?: number;
}

export interface FakePaymentServerOptions {
  failures?: FailureShares;
  /** `Retry-After` of the random 429s, in seconds; default 1. */
  retryAfterSeconds?: number;
  /** Randomness in [0, 1); default Math.random. */
  random?: () => number;
}

export interface Charge {
  id: string;
  idempotencyKey: string;
  subscriptionId: string;
  payer: string;
  amountCents: number;
  dueAt: number;
}

export interface PaymentServerStats {
  requests: number;
  /** Charges actually made. */
  charges: number;
  /** Requests that repeated a charged key and got the original charge back instead of a new one. */
  replayed: number;
  serverErrors: number;
  rateLimited: number;
  declined: number;
  lostResponses: number;
}

export interface FakePaymentServer {
  readonly url: string;
  /** The next requests for `subscriptionId` get these replies, in order; later ones fall back to the random shares. */
  script(subscriptionId: string, replies: readonly Reply[]): void;
  readonly charges: readonly Charge[];
  /** Charges made per idempotency key. */
  chargesByKey(): Map<string, number>;
  /** Charges made per subscription and due date (`${subscriptionId}@${dueAt}`). */
  chargesByPayment(): Map<string, number>;
  readonly stats: Readonly<PaymentServerStats>;
  close(): Promise<void>;
}

export async function startFakePaymentServer(options: FakePaymentServerOptions = {}): Promise<FakePaymentServer> {
  const shares = options.failures ?? {};
  const random = options.random ?? Math.random;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const scripts = new Map<string, Reply[]>();
  const charges: Charge[] = [];
  const byKey = new Map<string, Charge>();
  const chargeCount = new Map<string, number>();
  const stats: PaymentServerStats = { requests: 0, charges: 0, replayed: 0, serverErrors: 0, rateLimited: 0, declined: 0, lostResponses: 0 };

  const draw = (subscriptionId: string): Reply => {
    const scripted = scripts.get(subscriptionId)?.shift();
    if (scripted) return scripted;
    let r = random();
    const table: [number | undefined, Reply][] = [
      [shares.serverError, reply.serverError],
      [shares.rateLimited, reply.rateLimited(retryAfterSeconds)],
      [shares.cardDeclined, reply.cardDeclined],
      [shares.lostResponse, reply.lostResponse],
    ];
    for (const [share = 0, outcome] of table) {
      if (r < share) return outcome;
      r -= share;
    }
    return reply.ok;
  };

  const charge = (key: string, body: ChargeRequest): Charge => {
    const made: Charge = { id: `ch_${String(charges.length + 1).padStart(4, "0")}`, idempotencyKey: key, ...body };
    charges.push(made);
    byKey.set(key, made);
    chargeCount.set(key, (chargeCount.get(key) ?? 0) + 1);
    stats.charges++;
    return made;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || req.url !== "/charges") return send(res, 404, { error: "not_found" });
    stats.requests++;
    const key = req.headers["idempotency-key"];
    if (typeof key !== "string" || key.length === 0) return send(res, 400, { error: "missing_idempotency_key" });
    const body = parseCharge(await readBody(req));
    if (!body) return send(res, 400, { error: "invalid_request", message: "expected { subscriptionId, payer, amountCents, dueAt }" });

    const original = byKey.get(key);
    if (original) {
      stats.replayed++;
      return send(res, 200, { ...original, replayed: true }, { "idempotent-replayed": "true" });
    }
    const outcome = draw(body.subscriptionId);
    switch (outcome.kind) {
      case "ok":
        return send(res, 200, { ...charge(key, body), replayed: false });
      case "server_error":
        stats.serverErrors++;
        return send(res, 500, { error: "internal_error" });
      case "rate_limited":
        stats.rateLimited++;
        return send(res, 429, { error: "rate_limited" }, { "retry-after": outcome.retryAfter });
      case "card_declined":
        stats.declined++;
        return send(res, 402, { error: "card_declined", message: `the card of ${body.payer} was declined` });
      case "lost_response":
        stats.lostResponses++;
        charge(key, body);
        res.socket?.destroy();
        return;
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: "internal_error" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    script(subscriptionId, replies) {
      scripts.set(subscriptionId, [...(scripts.get(subscriptionId) ?? []), ...replies]);
    },
    charges,
    chargesByKey: () => new Map(chargeCount),
    chargesByPayment() {
      const counts = new Map<string, number>();
      for (const c of charges) counts.set(`${c.subscriptionId}@${c.dueAt}`, (counts.get(`${c.subscriptionId}@${c.dueAt}`) ?? 0) + 1);
      return counts;
    },
    stats,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // fetch keeps connections alive; without this, close() would wait for them to time out.
        server.closeAllConnections();
      }),
  };
}

type ChargeRequest = Omit<Charge, "id" | "idempotencyKey">;

function parseCharge(text: string): ChargeRequest | null {
  try {
    const v = JSON.parse(text) as Partial<ChargeRequest>;
    const ok =
      typeof v.subscriptionId === "string" && typeof v.payer === "string" && Number.isInteger(v.amountCents) && (v.amountCents as number) > 0 && Number.isFinite(v.dueAt);
    return ok ? { subscriptionId: v.subscriptionId!, payer: v.payer!, amountCents: v.amountCents!, dueAt: v.dueAt! } : null;
  } catch {
    return null;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
