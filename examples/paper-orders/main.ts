/**
 * Seed 002 on tickwork, end to end on real parts: the paper-trading API on Hono served on
 * 127.0.0.1, an SQLite file (or PostgreSQL), and a scripted client using real fetch. It opens
 * positions, retries a call with the same key, fires five duplicates at once, gets an order refused
 * and retries it after a deposit, closes a position, resets the account twice with one key, prints
 * every request and response, and exits.
 *
 *   npm run example:paper-orders                          # SQLite file in the OS temp dir, removed afterwards
 *   npm run example:paper-orders -- --db ./paper.db
 *   npm run example:paper-orders -- --db postgres://postgres@127.0.0.1:5432/test   (or DATABASE_URL=...)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogEvent } from "../../src/index.js";
import { createPaperOrdersApp } from "./app.js";
import { apiClient, type Json, type Reply } from "./client.js";
import { describeTarget, type DatabaseTarget } from "./database.js";
import { accountsOf, executionsPerRequest, ledgerCheck, usd } from "./ledger.js";

const args = parseArgs(process.argv.slice(2));
const tempDir = args.target ? undefined : mkdtempSync(join(tmpdir(), "tickwork-paper-orders-"));
const target: DatabaseTarget = args.target ?? { kind: "sqlite", path: join(tempDir!, "paper-orders.db") };
// A new owner each run, so a database an earlier run used takes this one as well.
const owner = `alice-${randomBytes(2).toString("hex")}`;

const app = await createPaperOrdersApp({ database: target, logLevel: "info", logger: (event) => onEvent(event) });
const server = await app.listen();
const api = apiClient(server.url);
const tally = { sent: 0, executed: 0, replayed: 0, inFlight: 0, refused: 0 };

console.log("seed 002 on tickwork: a paper-trading API where every change carries an Idempotency-Key");
console.log(`database: ${describeTarget(target)}${tempDir ? " (a fresh temp file, removed at exit)" : ""}`);
console.log(`API:      ${server.url}   market: ${Object.entries(app.market.snapshot()).map(([s, c]) => `${s} ${usd(c)}`).join(", ")}`);
console.log(`keys:     scoped by (account, key, operation), remembered 24 h; a crashed server's claim is taken over after 1 min`);

// ---- the session -------------------------------------------------------------------------------

step("a new account");
const created = await call("POST", "/accounts", "create-1", { owner, startingBalanceCents: 2_000_000 });
const accountId = created.body.accountId as string;
const account = `/accounts/${accountId}`;

step("open a position; the answer is lost, so the client retries with the same key");
const eth = await call("POST", `${account}/positions`, "open-eth", { symbol: "ETH", quantity: 2 });
await call("POST", `${account}/positions`, "open-eth", { symbol: "ETH", quantity: 2 });

step("five identical requests at once (a double-clicking client, a retrying proxy)");
await burst(5, `${account}/positions`, "open-sol", { symbol: "SOL", quantity: 10 });

step("limit buys: one below the market rests with its cost reserved, one above it fills at the market price");
await call("POST", `${account}/orders`, "order-stx", { symbol: "STX", quantity: 1_000, limitPriceCents: 190 });
await call("POST", `${account}/orders`, "order-sol", { symbol: "SOL", quantity: 5, limitPriceCents: 16_000 });

step("an order the balance cannot pay: refused, and its key released; after a deposit the same key goes through");
await call("POST", `${account}/positions`, "open-eth-big", { symbol: "ETH", quantity: 4 });
await call("POST", `${account}/deposits`, "deposit-1", { amountCents: 500_000 });
await call("POST", `${account}/positions`, "open-eth-big", { symbol: "ETH", quantity: 4 });

step("the same key with a different body is not the same request");
await call("POST", `${account}/positions`, "open-eth", { symbol: "ETH", quantity: 3 });

step("ETH moves to $3,300.00; close the first ETH position, and retry the close");
app.market.set("ETH", 330_000);
await call("POST", `${account}/positions/${eth.body.positionId as string}/close`, "close-eth");
await call("POST", `${account}/positions/${eth.body.positionId as string}/close`, "close-eth");

step("reset the account (a new account id), then retry the reset with the same key, at the old and at the new account;\n   a new change on the old account is refused");
const reset = await call("POST", `${account}/reset`, "reset-1");
const newAccount = `/accounts/${reset.body.newAccountId as string}`;
await call("POST", `${account}/reset`, "reset-1");
await call("POST", `${newAccount}/reset`, "reset-1");
await call("POST", `${account}/positions`, "open-after-reset", { symbol: "SOL", quantity: 1 });

step("read both accounts");
await call("GET", account);
await call("GET", newAccount);

// ---- the end -------------------------------------------------------------------------------------

const perRequest = await executionsPerRequest(app.db, owner);
const accounts = await accountsOf(app.db, owner);
const ledger = await ledgerCheck(app.db, owner);
const keys = await app.tw.idempotency.list(accountId);
await app.stop();
if (tempDir) rmSync(tempDir, { recursive: true, force: true });

console.log("");
console.log("summary");
console.log(`  changes: ${tally.sent} POSTs sent; ${tally.executed} executed, ${tally.replayed} answered from the cache (Idempotent-Replayed), ${tally.inFlight} got 409 while their twin ran, ${tally.refused} refused (4xx)`);
console.log(`  executions per request id: ${perRequest.map((r) => `${r.requestId} ${r.count}`).join(", ")}`);
console.log(`  ${perRequest.every((r) => r.count === 1) ? "every request id executed exactly once" : "SOMETHING EXECUTED TWICE"}`);
console.log(`  accounts of ${owner}: ${accounts.map((a) => `${a.id} ${usd(a.balanceCents)}${a.replacedBy ? ` (replaced by ${a.replacedBy})` : " (current)"}`).join(", ")}`);
console.log(`  ledger: ${ledger.every((l) => l.balanceCents === l.ledgerCents) ? "each account's balance equals the sum of its executions" : "A BALANCE DISAGREES WITH ITS EXECUTIONS"}`);
console.log(`  idempotency keys under ${accountId}: ${keys.map((k) => `${k.operation} ${k.key} (${k.status})`).join(", ")}`);
if (!perRequest.every((r) => r.count === 1) || accounts.length !== 2) process.exitCode = 1;

// ---- output ------------------------------------------------------------------------------------------

function step(title: string): void {
  console.log("");
  console.log(`== ${title}`);
}

async function call(method: "GET" | "POST", path: string, key?: string, body?: Json): Promise<Reply> {
  console.log(`  ${method} ${path}${key ? `  [key ${key}]` : ""}${body ? `  ${JSON.stringify(body)}` : ""}`);
  const reply = method === "GET" ? await api.get(path) : await api.post(path, key ?? null, body);
  if (method === "POST") count(reply);
  console.log(`    -> ${describe(reply)}`);
  return reply;
}

/** `n` identical requests at once; those told 409 come back after their Retry-After, as a client should. */
async function burst(n: number, path: string, key: string, body: Json): Promise<void> {
  console.log(`  ${n} x POST ${path}  [key ${key}]  ${JSON.stringify(body)}`);
  const replies = await Promise.all(Array.from({ length: n }, () => api.post(path, key, body)));
  replies.forEach(count);
  for (const reply of replies) console.log(`    -> ${describe(reply)}`);
  const told409 = replies.filter((r) => r.status === 409);
  if (told409.length === 0) {
    console.log("    (on SQLite in one process each request runs to its end before the next one's claim, so the twins find it completed;");
    console.log("     on PostgreSQL, or with several server processes, they find it in flight and get 409)");
    return;
  }
  await new Promise((resolve) => setTimeout(resolve, Number(told409[0]!.headers.get("retry-after") ?? 1) * 1000));
  console.log(`  the ${told409.length} told 409 retry after Retry-After, with the same key`);
  const retries = await Promise.all(told409.map(() => api.post(path, key, body)));
  retries.forEach(count);
  for (const reply of retries) console.log(`    -> ${describe(reply)}`);
}

function count(reply: Reply): void {
  tally.sent++;
  if (reply.status === 409 && String(reply.body.type).endsWith("idempotency-key-in-flight")) tally.inFlight++;
  else if (reply.status >= 400) tally.refused++;
  else if (reply.replayed) tally.replayed++;
  else tally.executed++;
}

/** `201 replayed {...}` with amounts in dollars, or `422 insufficient-balance: <detail>`. */
function describe(reply: Reply): string {
  const { status, body } = reply;
  if (status >= 400) {
    const type = String(body.type).split(":").pop();
    const retry = reply.headers.get("retry-after");
    return `${status} ${type}: ${String(body.detail)}${retry ? ` (Retry-After: ${retry})` : ""}`;
  }
  return `${status}${reply.replayed ? " replayed" : ""}  ${formatBody(body)}`;
}

function formatBody(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(formatBody).join(", ")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const parts = Object.entries(value as Json).map(([k, v]) =>
    k.endsWith("Cents") ? `${k.slice(0, -5)}: ${typeof v === "number" ? usd(v) : formatBody(v)}` : k.endsWith("At") && typeof v === "number" ? null : `${k}: ${formatBody(v)}`,
  );
  return `{ ${parts.filter((p) => p !== null).join(", ")} }`;
}

/** tickwork's events at level info and above, one line each (claims released by refusals show here). */
function onEvent(event: LogEvent): void {
  const { event: name, level, time: _time, ...fields } = event;
  if (name === "engine.started" || name === "engine.workers_started" || name === "engine.stopped") return;
  const text = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" ");
  console.log(`    tickwork ${level} ${name} ${text}`);
}

function parseArgs(argv: string[]): { target: DatabaseTarget | undefined } {
  let db: string | undefined = process.env.DATABASE_URL || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--db") {
      db = argv[++i];
      if (db === undefined) throw new Error("--db needs a value");
    } else if (arg.startsWith("--db=")) db = arg.slice(5);
    else throw new Error(`unknown argument ${arg}; use --db <file | postgres://...>`);
  }
  if (!db) return { target: undefined };
  // The demo's tables and tickwork's go to a schema of their own, so a shared database stays tidy.
  if (/^postgres(ql)?:\/\//.test(db)) return { target: { kind: "postgres", url: db, schema: "paper_orders_demo" } };
  return { target: { kind: "sqlite", path: db } };
}
