/**
 * The receiving side (the seed's UserPaperTradePortfolio), as a real HTTP service on 127.0.0.1.
 *
 * `POST /callbacks/hourly` and `POST /callbacks/daily` take a Standard Webhooks request: the
 * signature is verified (401 if it does not check out), the body validated (400), and the callback
 * UPSERTed by (account, kind, period) into the receiver's own SQLite store, so a callback delivered
 * twice leaves one row (the seed: "the receiving side uses UPSERT, making re-delivery idempotent").
 *
 * It fails on purpose: from a script per callback key first (tests), then from shares drawn from a
 * hash of the key and the attempt (the demo), so a run is the same every time. A failure is a 500
 * (nothing stored) or a hang (no answer, nothing stored; the sender's timeout ends it). It counts
 * every request by key and by webhook id, so a test can tell a re-delivery (the same id again:
 * harmless) from a duplicate (one key stored under two ids: a callback emitted twice).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import * as z from "zod";
import { WebhookVerificationError, verifyWebhook } from "../../src/delivery/index.js";
import { callbackKey, type Callback } from "./callbacks.js";

export type Reply = "ok" | "error" | "hang";

export interface ReceiverOptions {
  /** The Standard Webhooks secret the sender signs with. */
  secret: string;
  /** The receiver's clock for the signature timestamp's tolerance (the tests' fake clock); default Date.now. */
  now?: () => number;
  /** Shares (0 to 1) of requests that fail each way when nothing is scripted, drawn per key and attempt. */
  failures?: { error?: number; hang?: number };
  /** Seeds the draws; default 0. */
  seed?: number;
  /** Answer a stored callback after this many real milliseconds (so a batch is in flight a while). */
  answerDelayMs?: number;
}

export interface ReceivedRequest {
  key: string;
  webhookId: string;
  /** The receiver's clock when the request came in. */
  at: number;
  /** 1 for the first request for this key. */
  attempt: number;
  reply: Reply;
}

export interface ReceiverStats {
  requests: number;
  /** Callbacks stored (upserted). */
  stored: number;
  /** Stored callbacks whose webhook id had been stored before: a re-delivery, harmless under UPSERT. */
  redelivered: number;
  errors: number;
  hangs: number;
  /** Requests refused: bad signature (401) or bad body (400). */
  refused: number;
}

export interface StoredCallback {
  accountId: string;
  kind: "hourly" | "daily";
  period: string;
  peak: number;
  bottom: number;
  close: number;
  closeSource: string | null;
  webhookId: string;
  /** How many times this row was written (1 + re-deliveries and duplicates). */
  writes: number;
}

export interface Receiver {
  readonly url: string;
  /** The next requests for `key` get these replies, in order; later ones fall back to the shares. */
  script(key: string, replies: readonly Reply[]): void;
  readonly stats: Readonly<ReceiverStats>;
  /** Requests not yet answered (hanging or waiting out `answerDelayMs`). */
  readonly active: number;
  /** Requests being held without an answer on purpose. */
  readonly hanging: number;
  /** Every request, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  /** Stored callbacks: for each key, the distinct webhook ids it was stored under. */
  idsByKey(kind?: "hourly" | "daily"): Map<string, Set<string>>;
  /** Keys stored under more than one webhook id: a callback emitted twice. The tests expect none for daily. */
  duplicates(kind: "hourly" | "daily"): string[];
  /** The receiver's store, by kind. */
  rows(kind: "hourly" | "daily"): StoredCallback[];
  close(): Promise<void>;
}

const Finite = z.number();
const CallbackSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("hourly"), accountId: z.string().min(1), hour: z.iso.datetime(), peak: Finite, bottom: Finite, close: Finite }).strict(),
  z
    .object({ kind: z.literal("daily"), accountId: z.string().min(1), date: z.iso.date(), peak: Finite, bottom: Finite, close: Finite, closeSource: z.enum(["midnight", "daily_peak"]) })
    .strict(),
]);

const UPSERT = `
  INSERT INTO account_extremes (account_id, kind, period, peak, bottom, close, close_source, webhook_id, writes)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
  ON CONFLICT (account_id, kind, period) DO UPDATE SET
    peak = excluded.peak, bottom = excluded.bottom, close = excluded.close, close_source = excluded.close_source,
    webhook_id = excluded.webhook_id, writes = account_extremes.writes + 1`;

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const now = options.now ?? Date.now;
  const shares = { error: options.failures?.error ?? 0, hang: options.failures?.hang ?? 0 };
  const seed = options.seed ?? 0;
  const scripts = new Map<string, Reply[]>();
  const attempts = new Map<string, number>();
  const storedIds = new Map<string, Set<string>>();
  const seenIds = new Set<string>();
  const requests: ReceivedRequest[] = [];
  const stats: ReceiverStats = { requests: 0, stored: 0, redelivered: 0, errors: 0, hangs: 0, refused: 0 };
  let active = 0;
  let hanging = 0;

  const store = new Database(":memory:");
  store.exec(`CREATE TABLE account_extremes (
    account_id TEXT NOT NULL, kind TEXT NOT NULL, period TEXT NOT NULL,
    peak REAL NOT NULL, bottom REAL NOT NULL, close REAL NOT NULL, close_source TEXT,
    webhook_id TEXT NOT NULL, writes INTEGER NOT NULL,
    PRIMARY KEY (account_id, kind, period))`);
  const upsert = store.prepare(UPSERT);

  const draw = (key: string, attempt: number): Reply => {
    const scripted = scripts.get(key)?.shift();
    if (scripted) return scripted;
    const r = unitHash(`${seed}:${key}:${attempt}`);
    if (r < shares.error) return "error";
    if (r < shares.error + shares.hang) return "hang";
    return "ok";
  };

  const save = (callback: Callback, key: string, webhookId: string) => {
    const period = callback.kind === "hourly" ? callback.hour : callback.date;
    upsert.run(callback.accountId, callback.kind, period, callback.peak, callback.bottom, callback.close, callback.kind === "daily" ? callback.closeSource : null, webhookId);
    stats.stored++;
    if (seenIds.has(webhookId)) stats.redelivered++;
    seenIds.add(webhookId);
    let ids = storedIds.get(key);
    if (!ids) storedIds.set(key, (ids = new Set()));
    ids.add(webhookId);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const kind = req.url === "/callbacks/hourly" ? "hourly" : req.url === "/callbacks/daily" ? "daily" : null;
    if (req.method !== "POST" || !kind) return send(res, 404, { error: "not_found" });
    stats.requests++;
    const body = await readBody(req);
    let webhookId: string;
    let payload: unknown;
    try {
      ({ id: webhookId, payload } = await verifyWebhook({ secret: options.secret, headers: req.headers, body, now: now() }));
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      stats.refused++;
      return send(res, 401, { error: "invalid_signature", message: error.message });
    }
    const parsed = CallbackSchema.safeParse(payload);
    if (!parsed.success || parsed.data.kind !== kind) {
      stats.refused++;
      const message = parsed.success ? `a ${parsed.data.kind} callback sent to /callbacks/${kind}` : parsed.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
      return send(res, 400, { error: "invalid_callback", message });
    }
    const callback = parsed.data;
    const key = callbackKey(callback);
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const reply = draw(key, attempt);
    requests.push({ key, webhookId, at: now(), attempt, reply });
    if (reply === "error") {
      stats.errors++;
      return send(res, 500, { error: "internal_error" });
    }
    if (reply === "hang") {
      stats.hangs++;
      hanging++;
      res.once("close", () => hanging--);
      return;
    }
    save(callback, key, webhookId);
    if (options.answerDelayMs) await new Promise((resolve) => setTimeout(resolve, options.answerDelayMs));
    send(res, 200, { stored: true });
  };

  const server = createServer((req, res) => {
    active++;
    res.once("close", () => active--);
    handle(req, res).catch(() => send(res, 500, { error: "internal_error" }));
  });
  // A connection the client reuses at the moment the server's keep-alive timer closes it fails
  // without the request ever reaching the server (fetch: "other side closed"). Node's 5 s default
  // sits right at the client's 4 s reuse limit, a gap a loaded event loop closes; a server that keeps
  // idle connections a minute leaves the closing to the client, which never reuses what it closed.
  server.keepAliveTimeout = 65_000;
  // Up to 500 requests arrive at once; the default backlog (511) is just enough, so make room.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", backlog: 2_048 }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const idsByKey = (kind?: "hourly" | "daily") => new Map([...storedIds].filter(([key]) => !kind || key.startsWith(`${kind}:`)));
  return {
    url: `http://127.0.0.1:${port}`,
    script(key, replies) {
      scripts.set(key, [...(scripts.get(key) ?? []), ...replies]);
    },
    stats,
    get active() {
      return active;
    },
    get hanging() {
      return hanging;
    },
    requests,
    idsByKey,
    duplicates: (kind) => [...idsByKey(kind)].filter(([, ids]) => ids.size > 1).map(([key]) => key),
    rows: (kind) =>
      (
        store.prepare(`SELECT account_id, kind, period, peak, bottom, close, close_source, webhook_id, writes FROM account_extremes WHERE kind = ? ORDER BY account_id, period`).all(kind) as {
          account_id: string;
          kind: "hourly" | "daily";
          period: string;
          peak: number;
          bottom: number;
          close: number;
          close_source: string | null;
          webhook_id: string;
          writes: number;
        }[]
      ).map((r) => ({ accountId: r.account_id, kind: r.kind, period: r.period, peak: r.peak, bottom: r.bottom, close: r.close, closeSource: r.close_source, webhookId: r.webhook_id, writes: r.writes })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          store.close();
          if (error) reject(error);
          else resolve();
        });
        // fetch keeps connections alive and hung requests stay open; without this close() would wait for them.
        server.closeAllConnections();
      }),
  };
}

/** FNV-1a of the text, as a number in [0, 1): the same draw for the same key and attempt on every run. */
function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche: FNV's low bits alone are poorly spread for keys that differ in one digit.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 4_294_967_296;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
