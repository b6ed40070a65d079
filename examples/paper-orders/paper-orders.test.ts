import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { createPaperOrdersApp, type PaperOrdersApp } from "./app.js";
import { apiClient, type ApiClient, type Json, type Reply } from "./client.js";
import { openDatabase, type AppDatabase, type DatabaseTarget } from "./database.js";
import { accountsOf, executionsPerRequest, ledgerCheck } from "./ledger.js";
import type { HoldPoint, ServerProcessConfig } from "./server-process.js";

/** The example on each database it supports: an SQLite file, and PostgreSQL in a schema of its own. */
const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-paper-orders-"));
      return { target: { kind: "sqlite", path: join(dir, "paper-orders.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "postgres",
    open() {
      const schema = uniqueSchema();
      return { target: { kind: "postgres", url: DATABASE_URL, schema }, cleanup: () => dropSchema(schema) };
    },
  },
];

const PROBLEM = "urn:paper-orders:problem:";
const inFlight = (r: Reply) => r.status === 409 && r.body.type === `${PROBLEM}idempotency-key-in-flight`;

/** Every request id of the owner produced exactly one execution, and every balance equals the sum of its executions. */
async function expectNothingExecutedTwice(db: AppDatabase, owner: string): Promise<void> {
  const perRequest = await executionsPerRequest(db, owner);
  expect(perRequest.length).toBeGreaterThan(0);
  for (const r of perRequest) expect(r.count, `executions of ${r.operation} ${r.requestId}`).toBe(1);
  for (const l of await ledgerCheck(db, owner)) expect(l.balanceCents, `balance of ${l.accountId} against its executions`).toBe(l.ledgerCents);
}

/** Of identical requests sent at once: one executed, the rest got its answer replayed or 409 in flight. */
function expectOneExecuted(replies: Reply[]): Reply {
  const executed = replies.filter((r) => r.status < 300 && !r.replayed);
  expect(executed, `statuses ${replies.map((r) => `${r.status}${r.replayed ? " replayed" : ""}`).join(", ")}`).toHaveLength(1);
  for (const r of replies) {
    if (inFlight(r)) {
      expect(r.headers.get("retry-after")).toBe("1");
      continue;
    }
    expect(r.status).toBe(executed[0]!.status);
    expect(r.body).toEqual(executed[0]!.body);
  }
  return executed[0]!;
}

describe.each(databases)("paper-orders API on $name", (database) => {
  let app: PaperOrdersApp;
  let api: ApiClient;
  let cleanup: () => Promise<void>;
  let events: LogEvent[];

  beforeEach(async () => {
    const opened = database.open();
    cleanup = opened.cleanup;
    events = [];
    app = await createPaperOrdersApp({ database: opened.target, logger: (event) => events.push(event), logLevel: "debug" });
    api = apiClient((await app.listen()).url);
  });

  afterEach(async () => {
    await app.stop();
    await cleanup();
  });

  async function newAccount(owner: string, startingBalanceCents = 2_000_000): Promise<string> {
    const reply = await api.post("/accounts", `create-${owner}`, { owner, startingBalanceCents });
    expect(reply.status).toBe(201);
    return reply.body.accountId as string;
  }

  /** Sends a request, then the same request again: the second is the first's answer, replayed. */
  async function twice(path: string, key: string, body?: Json): Promise<Reply> {
    const first = await api.post(path, key, body);
    expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
    expect(first.replayed).toBe(false);
    const again = await api.post(path, key, body);
    expect(again.replayed, `${path} [${key}] repeated`).toBe(true);
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("content-type")).toContain("application/json");
    return first;
  }

  it("answers every call repeated with its key with the first response, and executes it once", async () => {
    const created = await twice("/accounts", "create-1", { owner: "alice", startingBalanceCents: 2_000_000 });
    expect(created.status).toBe(201);
    const a = `/accounts/${created.body.accountId as string}`;

    expect((await twice(`${a}/deposits`, "deposit-1", { amountCents: 100_000 })).body).toMatchObject({ amountCents: 100_000, balanceCents: 2_100_000 });
    const opened = await twice(`${a}/positions`, "open-1", { symbol: "ETH", quantity: 2 });
    expect(opened.body).toMatchObject({ symbol: "ETH", quantity: 2, priceCents: 300_000, costCents: 600_000, balanceCents: 1_500_000 });
    const resting = await twice(`${a}/orders`, "order-resting", { symbol: "STX", quantity: 100, limitPriceCents: 150 });
    expect(resting.body).toMatchObject({ status: "open", fillPriceCents: null, positionId: null, debitedCents: 15_000, balanceCents: 1_485_000 });
    const filled = await twice(`${a}/orders`, "order-filled", { symbol: "SOL", quantity: 3, limitPriceCents: 20_000 });
    expect(filled.body).toMatchObject({ status: "filled", fillPriceCents: 15_000, debitedCents: 45_000, balanceCents: 1_440_000 });
    app.market.set("ETH", 310_000);
    const closed = await twice(`${a}/positions/${opened.body.positionId as string}/close`, "close-1");
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ priceCents: 310_000, proceedsCents: 620_000, pnlCents: 20_000, balanceCents: 2_060_000 });

    const account = await api.get(a);
    expect(account.body).toMatchObject({ balanceCents: 2_060_000, replacedBy: null });
    expect((account.body.positions as Json[]).map((p) => [p.symbol, p.quantity])).toEqual([["SOL", 3]]);
    expect((account.body.orders as Json[]).map((o) => [o.symbol, o.quantity, o.limitPriceCents])).toEqual([["STX", 100, 150]]);
    expect((await executionsPerRequest(app.db, "alice")).map((r) => r.requestId)).toEqual(["close-1", "create-1", "deposit-1", "open-1", "order-filled", "order-resting"]);
    await expectNothingExecutedTwice(app.db, "alice");
    expect(events.filter((e) => e.event === "idempotency.replayed")).toHaveLength(6);
  });

  it("executes ten identical requests sent at once exactly once", async () => {
    const a = `/accounts/${await newAccount("alice")}`;
    const bursts: [string, string, Json][] = [
      [`${a}/positions`, "burst-open", { symbol: "ETH", quantity: 1 }],
      [`${a}/orders`, "burst-order", { symbol: "SOL", quantity: 2, limitPriceCents: 20_000 }],
      [`${a}/deposits`, "burst-deposit", { amountCents: 50_000 }],
    ];
    for (const [path, key, body] of bursts) {
      expectOneExecuted(await Promise.all(Array.from({ length: 10 }, () => api.post(path, key, body))));
    }
    expect((await api.get(a)).body.balanceCents).toBe(2_000_000 - 300_000 - 30_000 + 50_000);
    await expectNothingExecutedTwice(app.db, "alice");
  });

  it("creates one new account for a reset retried with the same key, whichever account the retry names", async () => {
    const a = await newAccount("alice");
    const bob = await newAccount("bob");
    await api.post(`/accounts/${a}/positions`, "open-1", { symbol: "ETH", quantity: 1 });

    const first = await api.post(`/accounts/${a}/reset`, "reset-1");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ replacedAccountId: a, balanceCents: 1_000_000 });
    const b = first.body.newAccountId as string;
    expect(b).not.toBe(a);
    // The old account's URL, and the new one's (seed 002: looked up by key and operation alone).
    for (const at of [a, b]) {
      const again = await api.post(`/accounts/${at}/reset`, "reset-1");
      expect([again.status, again.replayed, again.body]).toEqual([201, true, first.body]);
    }

    // Ten at once with a new key: one more account, and every twin answered with it.
    const burst = expectOneExecuted(await Promise.all(Array.from({ length: 10 }, () => api.post(`/accounts/${b}/reset`, "reset-2", { startingBalanceCents: 500_000 }))));
    expect(burst.body).toMatchObject({ replacedAccountId: b, balanceCents: 500_000 });
    const c = burst.body.newAccountId as string;

    // A new key on an account that is gone is a new request, refused; its key is released.
    const late = await api.post(`/accounts/${a}/reset`, "reset-3");
    expect([late.status, late.body.type, late.body.replacedBy]).toEqual([409, `${PROBLEM}account-replaced`, b]);
    expect(await accountsOf(app.db, "alice")).toEqual([
      { id: a, balanceCents: 1_700_000, replacedBy: b },
      { id: b, balanceCents: 1_000_000, replacedBy: c },
      { id: c, balanceCents: 500_000, replacedBy: null },
    ]);

    // Keys are the owner's: bob resetting with alice's key resets bob's account, not replays hers.
    const bobs = await api.post(`/accounts/${bob}/reset`, "reset-1");
    expect([bobs.status, bobs.replayed, bobs.body.replacedAccountId]).toEqual([201, false, bob]);
    expect(await accountsOf(app.db, "bob")).toHaveLength(2);
    const keys = await app.tw.idempotency.list(a);
    expect(keys.filter((k) => k.operation === "RESET").map((k) => [k.key, k.status])).toEqual([["alice:reset-1", "completed"]]);
    await expectNothingExecutedTwice(app.db, "alice");
    await expectNothingExecutedTwice(app.db, "bob");
  });

  it("releases the key of a refused change, so the same key goes through after a top-up", async () => {
    const id = await newAccount("alice", 100_000);
    const a = `/accounts/${id}`;
    const refused = await api.post(`${a}/positions`, "open-big", { symbol: "ETH", quantity: 1 });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.body).toMatchObject({ type: `${PROBLEM}insufficient-balance`, status: 422, error: "INSUFFICIENT_BALANCE", neededCents: 300_000, balanceCents: 100_000 });
    expect(events).toContainEqual(expect.objectContaining({ event: "idempotency.released", key: "open-big", reason: "the operation returned a failure" }));
    expect((await app.tw.idempotency.list(id)).map((k) => k.key)).not.toContain("open-big");

    // The refusal is not replayed: the same key, asked again, is refused again on the current balance.
    expect((await api.post(`${a}/positions`, "open-big", { symbol: "ETH", quantity: 1 })).status).toBe(422);
    expect((await api.post(`${a}/deposits`, "top-up", { amountCents: 200_000 })).status).toBe(201);
    const retried = await api.post(`${a}/positions`, "open-big", { symbol: "ETH", quantity: 1 });
    expect([retried.status, retried.replayed, retried.body.balanceCents]).toEqual([201, false, 0]);
    expect((await api.post(`${a}/positions`, "open-big", { symbol: "ETH", quantity: 1 })).replayed).toBe(true);

    // Refusals of the other rules release their keys the same way.
    const unknown = await api.post(`${a}/positions/pos_0000000000/close`, "close-1");
    expect([unknown.status, unknown.body.error]).toEqual([404, "UNKNOWN_POSITION"]);
    const symbol = await api.post(`${a}/positions`, "open-doge", { symbol: "DOGE", quantity: 1 });
    expect([symbol.status, symbol.body.error]).toEqual([422, "UNKNOWN_SYMBOL"]);
    expect((await app.tw.idempotency.list(id)).map((k) => k.key).sort()).toEqual(["open-big", "top-up"]);
    await expectNothingExecutedTwice(app.db, "alice");
  });

  it("refuses a key reused with another body (422), and treats the same key on another operation or account as another request", async () => {
    const a = `/accounts/${await newAccount("alice")}`;
    const b = `/accounts/${await newAccount("bob")}`;
    const opened = await api.post(`${a}/positions`, "k1", { symbol: "ETH", quantity: 1 });
    const reused = await api.post(`${a}/positions`, "k1", { symbol: "ETH", quantity: 2 });
    expect([reused.status, reused.body.type]).toEqual([422, `${PROBLEM}idempotency-key-reused`]);
    // The path is part of the request: closing another position with a used key is refused too.
    const second = await api.post(`${a}/positions`, "k2", { symbol: "SOL", quantity: 1 });
    expect((await api.post(`${a}/positions/${opened.body.positionId as string}/close`, "close-k")).status).toBe(200);
    expect((await api.post(`${a}/positions/${second.body.positionId as string}/close`, "close-k")).status).toBe(422);

    const otherOperation = await api.post(`${a}/deposits`, "k1", { amountCents: 1_000 });
    const otherAccount = await api.post(`${b}/positions`, "k1", { symbol: "ETH", quantity: 1 });
    expect([otherOperation.status, otherOperation.replayed, otherAccount.status, otherAccount.replayed]).toEqual([201, false, 201, false]);
    await expectNothingExecutedTwice(app.db, "alice");
    await expectNothingExecutedTwice(app.db, "bob");
  });

  it("refuses bad input with 400 problem+json before claiming a key", async () => {
    const id = await newAccount("alice");
    const a = `/accounts/${id}`;
    const bad: [string | null, unknown, string][] = [
      [null, { symbol: "ETH", quantity: 1 }, "idempotency-key-missing"],
      ["x".repeat(256), { symbol: "ETH", quantity: 1 }, "idempotency-key-invalid"],
      ["k", { symbol: "ETH", quantity: -1 }, "invalid-body"],
      ["k", { symbol: "ETH", quantity: 1.5 }, "invalid-body"],
      ["k", { symbol: "eth", quantity: 1 }, "invalid-body"],
      ["k", { symbol: "ETH", quantity: 1, leverage: 10 }, "invalid-body"],
    ];
    for (const [key, body, type] of bad) {
      const reply = await api.post(`${a}/positions`, key, body);
      expect([reply.status, reply.body.type], JSON.stringify(body)).toEqual([400, `${PROBLEM}${type}`]);
      expect(reply.headers.get("content-type")).toBe("application/problem+json");
    }
    const notJson = await fetch(`${api.url}${a}/positions`, { method: "POST", headers: { "idempotency-key": "k" }, body: "{not json" });
    expect(notJson.status).toBe(400);
    const issues = await api.post(`${a}/orders`, "k", { symbol: "ETH", quantity: 1 });
    expect(issues.body.issues).toEqual([{ path: "limitPriceCents", message: expect.any(String) }]);
    expect((await api.post("/accounts/acc_0000000000/positions", "k", { symbol: "ETH", quantity: 1 })).body.type).toBe(`${PROBLEM}unknown-account`);
    expect((await api.post("/accounts/not-an-id/positions", "k", { symbol: "ETH", quantity: 1 })).status).toBe(404);
    expect((await api.post("/accounts", "create-again", { owner: "alice" })).body).toMatchObject({ status: 409, error: "ACCOUNT_EXISTS", accountId: id });

    expect((await app.tw.idempotency.list(id)).map((k) => k.key)).toEqual([]);
    expect(await executionsPerRequest(app.db, "alice")).toEqual([{ requestId: "create-alice", operation: "CREATE_ACCOUNT", count: 1 }]);
  });
});

// ---- real server processes --------------------------------------------------------------------

const SERVER = fileURLToPath(new URL("./server-process.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** Short, so the test waits little; long enough that "409 right after the crash" holds on a busy machine. */
const STALE_AFTER = "3s";

interface Line {
  event: string;
  [field: string]: unknown;
}

/** A server-process.ts child and every line it printed. */
class ServerProcess {
  readonly lines: Line[] = [];
  stderr = "";
  readonly exited: Promise<void>;
  api!: ApiClient;

  private constructor(private readonly child: ChildProcess) {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    createInterface({ input: child.stdout! }).on("line", (text) => {
      try {
        this.lines.push(JSON.parse(text) as Line);
      } catch {
        this.lines.push({ event: "stdout.text", text });
      }
    });
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
  }

  static async start(config: ServerProcessConfig): Promise<ServerProcess> {
    const child = spawn(process.execPath, ["--import", "tsx", SERVER, JSON.stringify(config)], { cwd: REPO, stdio: ["ignore", "pipe", "pipe", "ipc"] });
    const server = new ServerProcess(child);
    const ready = await server.waitFor((l) => l.event === "server.ready", "server.ready", 20_000);
    server.api = apiClient(ready.url as string);
    return server;
  }

  named(event: string): Line[] {
    return this.lines.filter((l) => l.event === event);
  }

  async waitFor(test: (line: Line) => boolean, what: string, ms = 10_000): Promise<Line> {
    const deadline = Date.now() + ms;
    for (;;) {
      const line = this.lines.find(test);
      if (line) return line;
      if (Date.now() > deadline || this.child.exitCode !== null) throw new Error(`server pid ${this.child.pid}: ${what} not printed\nstderr:\n${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** SIGKILL: nothing is flushed, released or completed. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM: the server closes its connections and the engine, then exits. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    await this.exited;
  }
}

/** Retries like a client told 409 (Retry-After), until the answer is something else. */
async function retryWhileInFlight(api: ApiClient, path: string, key: string, body?: Json, ms = 15_000): Promise<Reply> {
  const deadline = Date.now() + ms;
  for (;;) {
    const reply = await api.post(path, key, body);
    if (!inFlight(reply)) return reply;
    if (Date.now() > deadline) throw new Error(`${path} [${key}] still in flight after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(databases)("paper-orders server processes on $name", (database) => {
  let target: DatabaseTarget;
  let cleanup: () => Promise<void>;
  let db: AppDatabase;
  let servers: ServerProcess[];

  beforeEach(async () => {
    const opened = database.open();
    target = opened.target;
    cleanup = opened.cleanup;
    servers = [];
    // The test's own connection, to read the tables the servers write.
    const { store, db: conn } = await openDatabase(target);
    await store.close();
    db = conn;
  });

  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db.close();
    await cleanup();
  });

  async function start(hold?: ServerProcessConfig["hold"]): Promise<ServerProcess> {
    const server = await ServerProcess.start({ database: target, staleAfter: STALE_AFTER, ...(hold ? { hold } : {}) });
    servers.push(server);
    return server;
  }

  it("executes ten identical requests spread over two server processes exactly once", async () => {
    const [one, two] = await Promise.all([start(), start()]);
    const created = await one!.api.post("/accounts", "create-alice", { owner: "alice" });
    const a = `/accounts/${created.body.accountId as string}`;
    const servers = [one!, two!];

    expectOneExecuted(await Promise.all(Array.from({ length: 10 }, (_, i) => servers[i % 2]!.api.post(`${a}/positions`, "open-1", { symbol: "ETH", quantity: 1 }))));
    const reset = expectOneExecuted(await Promise.all(Array.from({ length: 10 }, (_, i) => servers[i % 2]!.api.post(`${a}/reset`, "reset-1"))));
    expect(reset.body.replacedAccountId).toBe(created.body.accountId);

    const accounts = await accountsOf(db, "alice");
    expect(accounts.map((x) => x.replacedBy === null)).toEqual([false, true]);
    await expectNothingExecutedTwice(db, "alice");
  });

  /**
   * Server A takes four requests (open, limit order, close, reset) and stops each at `point`, holding
   * its claim; then A is SIGKILLed. Server B, on the same database, answers their retries with 409
   * while A's claims are fresh, and runs them after `staleAfter`: each exactly once.
   */
  async function crashMidRequests(point: HoldPoint) {
    const held = ["crash-open", "crash-order", "crash-close", "crash-reset"];
    const [a, b] = await Promise.all([start({ point, requestIds: held }), start()]);
    const alice = (await a!.api.post("/accounts", "create-alice", { owner: "alice", startingBalanceCents: 2_000_000 })).body.accountId as string;
    const bob = (await a!.api.post("/accounts", "create-bob", { owner: "bob" })).body.accountId as string;
    const position = (await a!.api.post(`/accounts/${alice}/positions`, "open-eth", { symbol: "ETH", quantity: 1 })).body.positionId as string;
    const requests: { path: string; key: string; body?: Json }[] = [
      { path: `/accounts/${alice}/positions`, key: "crash-open", body: { symbol: "SOL", quantity: 10 } },
      { path: `/accounts/${alice}/orders`, key: "crash-order", body: { symbol: "SOL", quantity: 5, limitPriceCents: 16_000 } },
      { path: `/accounts/${alice}/positions/${position}/close`, key: "crash-close" },
      { path: `/accounts/${bob}/reset`, key: "crash-reset" },
    ];
    const lost = requests.map((r) => a!.api.post(r.path, r.key, r.body).then(() => "answered", (error: Error) => error.message));
    await a!.waitFor(() => a!.named("server.held").length === held.length, `${held.length} server.held lines`);
    const executionsAtCrash = new Map<string, string[]>();
    for (const key of held) executionsAtCrash.set(key, (await db.query<{ id: string }>("SELECT id FROM executions WHERE request_id = $1", [key])).map((r) => r.id));

    await a!.kill();
    // The client never got an answer: the connection died with the server.
    expect(await Promise.all(lost)).toEqual(held.map(() => "fetch failed"));

    // A's claims were renewed until it died: B sees them in flight and runs nothing yet.
    for (const r of requests) expect(inFlight(await b!.api.post(r.path, r.key, r.body)), `${r.key} right after the crash`).toBe(true);
    for (const key of held) expect((await db.query<{ id: string }>("SELECT id FROM executions WHERE request_id = $1", [key])).map((r) => r.id)).toEqual(executionsAtCrash.get(key));

    // After staleAfter without renewal, the next retry takes the claim over and runs.
    const answers = new Map<string, Reply>();
    for (const r of requests) answers.set(r.key, await retryWhileInFlight(b!.api, r.path, r.key, r.body));
    for (const [key, reply] of answers) expect([key, reply.status < 300, reply.replayed]).toEqual([key, true, false]);
    const reclaimed = b!.named("idempotency.reclaimed");
    expect(reclaimed.map((l) => l.key).sort()).toEqual(["bob:crash-reset", "crash-close", "crash-open", "crash-order"]);
    for (const line of reclaimed) expect(line.staleForMs as number).toBeGreaterThanOrEqual(3_000);

    // And once done, it is done: a further retry is a replay.
    for (const r of requests) {
      const again = await b!.api.post(r.path, r.key, r.body);
      expect([again.replayed, again.body]).toEqual([true, answers.get(r.key)!.body]);
    }
    for (const key of held) expect((await db.query("SELECT id FROM executions WHERE request_id = $1", [key])).length, `executions of ${key}`).toBe(1);
    expect((await accountsOf(db, "bob")).map((x) => x.replacedBy === null)).toEqual([false, true]);
    await expectNothingExecutedTwice(db, "alice");
    await expectNothingExecutedTwice(db, "bob");
    return { alice, bob, answers, executionsAtCrash };
  }

  it("a server killed after the claim, before the change: 409 while the claim is fresh, then one run after staleAfter", async () => {
    const { executionsAtCrash } = await crashMidRequests("before-effect");
    for (const [key, ids] of executionsAtCrash) expect(ids, `${key} had not executed when the server died`).toEqual([]);
    // Everything ran once, in B: ETH bought and sold, SOL bought twice over.
    const account = (await accountsOf(db, "alice"))[0]!;
    expect(account.balanceCents).toBe(2_000_000 - 300_000 - 150_000 - 75_000 + 300_000);
  });

  it("a server killed after the change committed, before the key completed: the retry answers from the execution row and runs nothing twice", async () => {
    const { alice, bob, answers, executionsAtCrash } = await crashMidRequests("after-effect");
    // Each change had committed in A; B's run found its execution row and answered from it.
    for (const [key, reply] of answers) expect([key, reply.body.executionId]).toEqual([key, executionsAtCrash.get(key)![0]]);
    const reset = answers.get("crash-reset")!.body;
    expect(reset.replacedAccountId).toBe(bob);
    expect((await accountsOf(db, "bob")).map((x) => x.id)).toEqual([bob, reset.newAccountId]);
    const account = (await accountsOf(db, "alice")).find((x) => x.id === alice)!;
    expect(account.balanceCents).toBe(2_000_000 - 300_000 - 150_000 - 75_000 + 300_000);
  });
});
