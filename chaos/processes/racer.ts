/**
 * An idempotency process: calls `tw.idempotency.run` for every key of the scenario, in the same
 * order as every other racer and from the same instant, `inFlight` calls at a time, so that several
 * processes race on each key. The operation writes `fn.start` (with a token of its own) to the ledger
 * before it works and `fn.done` after, ignoring any abort signal, as work that cannot be interrupted
 * would. Each call's answer goes to the ledger: `ran` (this call's operation ran: its token), `cached`
 * (the stored result: the token of the run that completed), or `error`. A call answered
 * DuplicateRequestError (the key is in flight elsewhere) or another error is retried, as a client
 * retries, until the key has a result. Racers go through keys `key-0`, `key-1`... until the
 * controller says `stop` (and at least `keys` of them); then they say `done`.
 */
import { randomUUID } from "node:crypto";
import { createTickwork } from "../../src/index.js";
import { DuplicateRequestError } from "../../src/idempotency/index.js";
import { openStore, type Target } from "../target.js";
import { child, ledgerSink, type ChildBase } from "./child.js";

export interface RacerConfig extends ChildBase {
  target: Target;
  staleAfterMs: number;
  /** Keys every racer goes through at least; it goes on with new keys until told to stop. */
  keys: number;
  inFlight: number;
  /** Epoch ms at which every racer starts its first call; null: when the controller says `go`. */
  startAt: number | null;
  workMs: [number, number];
  /** Give up on a key after this long without a result (it is then reported, never hidden). */
  giveUpMs: number;
}

export const RACER_EVENTS = ["idempotency.reclaimed", "idempotency.completion_lost", "idempotency.released", "store.error"] as const;

interface Result {
  key: string;
  token: string;
  pid: number;
}

const { config, ledger, say } = child<RacerConfig>("racer");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const tw = await createTickwork({
  store: openStore(config.target, "racer", { max: 3 }),
  logger: ledgerSink(ledger, RACER_EVENTS),
  migrate: false,
  handleSignals: false,
  idempotency: { staleAfter: config.staleAfterMs },
});
const [low, high] = config.workMs;

/** One call of `run` for `key`; what it answered. */
async function call(key: string): Promise<{ result?: Result; error?: unknown }> {
  let token: string | undefined;
  // Rest parameters: the operation accepts a context (with an abort signal) if the engine passes one,
  // and deliberately ignores it.
  const operation = async (..._context: unknown[]): Promise<Result> => {
    token = randomUUID();
    ledger.append("fn.start", { key, token });
    await sleep(low + Math.random() * (high - low));
    ledger.append("fn.done", { key, token });
    return { key, token, pid: process.pid };
  };
  try {
    const result = await tw.idempotency.run({ scope: "chaos", key, operation: "CHAOS" }, operation);
    const ran = token !== undefined && result.token === token;
    ledger.append("answer", { key, kind: ran ? "ran" : "cached", token: result.token, ownToken: token ?? null });
    return { result };
  } catch (error) {
    const duplicate = error instanceof DuplicateRequestError;
    const code = (error as { code?: unknown }).code;
    if (!duplicate) ledger.append("answer", { key, kind: "error", code: typeof code === "string" ? code : null, error: String(error).slice(0, 300), ownToken: token ?? null });
    return { error };
  }
}

async function settle(key: string): Promise<void> {
  const deadline = Date.now() + config.giveUpMs;
  while (Date.now() < deadline) {
    const { result } = await call(key);
    if (result) return;
    await sleep(50 + Math.random() * 150);
  }
  ledger.append("answer", { key, kind: "gave-up" });
}

let startAt = config.startAt;
let stopping = false;
process.on("message", (message: { go?: number; stop?: boolean }) => {
  if (typeof message.go === "number") startAt = message.go;
  if (message.stop) stopping = true;
});
say("ready");
while (startAt === null) await sleep(10);
await sleep(startAt - Date.now());
let nextKey = 0;
await Promise.all(
  Array.from({ length: config.inFlight }, async () => {
    while (!stopping || nextKey < config.keys) await settle(`key-${nextKey++}`);
  }),
);
ledger.append("racer.done", { keys: nextKey });
say("done", { keys: nextKey });
