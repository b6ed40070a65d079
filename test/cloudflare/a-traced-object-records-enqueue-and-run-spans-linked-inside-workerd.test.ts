import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnqueuedJobRpc } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import type { RecordedSpan } from "./fixtures/traced-objects.js";
import type { RelayedAnswer, RelayedCall } from "./fixtures/rpc-relay.js";
import { COMPATIBILITY_DATE, ROOT, fixture } from "./support/workerd.js";

/**
 * OpenTelemetry tracing on a Durable Object: a TickworkObject given the real SDK's tracer
 * (`engine: { tracer }`, sdk-trace-base with an in-memory exporter), driven as in production: the
 * enqueue is an RPC call into the object, the run happens in the object's alarm tick.
 *
 * Two workers run the same object: `traced` with no compatibility flag and no context manager (the
 * spans, links and statuses tickwork records need nothing more), and `traced-als` with the
 * `nodejs_als` flag and an AsyncLocalStorage context manager, which is what makes the active span
 * follow async calls in workerd (so a handler's own spans nest under its run).
 *
 * The fixtures are bundled here rather than with support/workerd.ts's bundleWorker: its platform
 * "neutral" ignores package.json's `browser` field, through which every @opentelemetry package
 * swaps its Node platform code (`os`, `util`, `process`) for the browser's, so the SDK does not
 * bundle at all that way. Wrangler bundles with esbuild's default platform, "browser", which honours
 * it: so does this. Node's builtins resolve on neither platform, so a build that succeeds with only
 * `cloudflare:*` external (the metafile says which imports were left external) imports nothing of Node's.
 */

const SPAN_KIND = { PRODUCER: 3, CONSUMER: 4 } as const;
const STATUS = { UNSET: 0, ERROR: 2 } as const;

interface Bundle {
  text: string;
  /** The imports left to the runtime. */
  externals: string[];
}

async function bundle(entry: string, external: string[]): Promise<Bundle> {
  const result = await build({
    entryPoints: [fixture(entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    external,
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const [output] = Object.values(result.metafile.outputs);
  return { text: result.outputFiles[0]!.text, externals: [...new Set(output!.imports.filter((i) => i.external).map((i) => i.path))].sort() };
}

let mf: Miniflare;
let plain: Bundle;
let als: Bundle;

/** Calls `method` on the object `object` of the worker `worker`, by Workers RPC from inside workerd. */
async function call<T>(worker: "traced" | "traced-als", object: string, method: string, ...args: unknown[]): Promise<T> {
  const body: RelayedCall = { binding: "TRACED", object, method, args };
  const response = await (await mf.getWorker(worker)).fetch("http://objects/rpc", { method: "POST", body: JSON.stringify(body) });
  const answer = (await response.json()) as RelayedAnswer;
  if (!answer.ok) throw Object.assign(new Error(answer.error.message), { name: answer.error.name });
  return answer.value as T;
}

/** The object's finished spans once `done` holds of them; fails after 10 s. */
function spansWhen(worker: "traced" | "traced-als", object: string, done: (spans: RecordedSpan[]) => boolean, what: string): Promise<RecordedSpan[]> {
  return eventually(async () => {
    const spans = await call<RecordedSpan[]>(worker, object, "spans");
    return done(spans) && spans;
  }, what, 10_000);
}

function named(spans: RecordedSpan[], name: string): RecordedSpan[] {
  return spans.filter((s) => s.name === name);
}

function only(spans: RecordedSpan[], name: string): RecordedSpan {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

const ids = (span: RecordedSpan) => ({ traceId: span.traceId, spanId: span.spanId });
const linkedTo = (span: RecordedSpan) => span.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId }));

beforeAll(async () => {
  [plain, als] = await Promise.all([bundle("traced-objects.ts", ["cloudflare:*"]), bundle("traced-objects-als.ts", ["cloudflare:*", "node:async_hooks"])]);
  const object = { TRACED: { className: "Traced", useSQLite: true } };
  mf = new Miniflare({
    workers: [
      { name: "traced", modules: true, script: plain.text, compatibilityDate: COMPATIBILITY_DATE, durableObjects: object },
      // AsyncLocalStorage (node:async_hooks) exists in workerd only with this flag (or nodejs_compat).
      { name: "traced-als", modules: true, script: als.text, compatibilityDate: COMPATIBILITY_DATE, compatibilityFlags: ["nodejs_als"], durableObjects: object },
    ],
  });
  await mf.ready;
});
afterAll(() => mf?.dispose());

describe.concurrent("a traced Durable Object records enqueue and run spans, linked, inside workerd", () => {
  it("the object, tickwork and the OpenTelemetry SDK bundle for workerd with nothing external but cloudflare:workers", () => {
    expect(plain.externals).toEqual(["cloudflare:workers"]);
    // The context manager's AsyncLocalStorage is the only other thing left to the runtime.
    expect(als.externals).toEqual(["cloudflare:workers", "node:async_hooks"]);
  });

  it("an enqueue by RPC is a producer span with the messaging attributes; its run in the alarm tick a consumer span of a trace of its own, linked to it", async () => {
    const job = await call<EnqueuedJobRpc>("traced", "mail", "enqueue", "mail", { to: "a@example.com" });
    const spans = await spansWhen("traced", "mail", (s) => named(s, "process mail").length > 0, "the run's span");

    const enqueue = only(spans, "enqueue mail");
    expect(enqueue.kind).toBe(SPAN_KIND.PRODUCER);
    expect(enqueue.parentSpanId).toBeNull();
    expect(enqueue.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "send",
      "messaging.operation.name": "enqueue",
      "messaging.destination.name": "mail",
      "messaging.message.id": job.id,
      "tickwork.job.duplicate": false,
    });
    expect(enqueue.status.code).toBe(STATUS.UNSET);

    const run = only(spans, "process mail");
    expect(run.kind).toBe(SPAN_KIND.CONSUMER);
    expect(run.parentSpanId).toBeNull();
    expect(run.traceId).not.toBe(enqueue.traceId);
    // The link came through the job's row: the enqueue's context, read back as a remote one.
    expect(run.links).toEqual([{ ...ids(enqueue), traceFlags: 1, isRemote: true }]);
    expect(run.attributes).toEqual({
      "messaging.system": "tickwork",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": "mail",
      "messaging.message.id": job.id,
      "tickwork.job.attempt": 1,
      "tickwork.job.outcome": "succeeded",
    });
    expect(run.status.code).toBe(STATUS.UNSET);

    // With no context manager no span is ever active: the handler's own span is not the run's child
    // but a trace of its own (the `traced-als` worker's test is the same with one).
    const smtp = only(spans, "smtp send");
    expect(smtp.parentSpanId).toBeNull();
    expect(smtp.traceId).not.toBe(run.traceId);
  });

  it("a failed attempt's span has status ERROR with the error; the retry, in a later tick, is another trace linked to the same enqueue; a job failing for good's span is ERROR too", async () => {
    const charge = await call<EnqueuedJobRpc>("traced", "failures", "enqueue", "charges", { amount: 5 });
    const refused = await call<EnqueuedJobRpc>("traced", "failures", "enqueue", "refuse", { n: 7 });
    const spans = await spansWhen("traced", "failures", (s) => named(s, "process charges").length === 2 && named(s, "process refuse").length === 1, "both charges runs and the refused run");

    const enqueueCharge = only(spans, "enqueue charges");
    const [first, second] = named(spans, "process charges") as [RecordedSpan, RecordedSpan];
    expect(first.kind).toBe(SPAN_KIND.CONSUMER);
    expect(first.attributes).toMatchObject({ "messaging.message.id": charge.id, "tickwork.job.attempt": 1, "tickwork.job.outcome": "retry", "error.type": "TypeError" });
    expect(first.status).toEqual({ code: STATUS.ERROR, message: "card declined" });
    expect(first.events.map((e) => [e.name, e.attributes["exception.type"], e.attributes["exception.message"]])).toEqual([["exception", "TypeError", "card declined"]]);
    expect(second.attributes).toMatchObject({ "messaging.message.id": charge.id, "tickwork.job.attempt": 2, "tickwork.job.outcome": "succeeded" });
    expect(second.status.code).toBe(STATUS.UNSET);
    expect(second.attributes).not.toHaveProperty("error.type");
    expect(linkedTo(first)).toEqual([ids(enqueueCharge)]);
    expect(linkedTo(second)).toEqual([ids(enqueueCharge)]);
    expect(new Set([first.traceId, second.traceId, enqueueCharge.traceId]).size).toBe(3);

    const enqueueRefused = only(spans, "enqueue refuse");
    const run = only(spans, "process refuse");
    expect(run.kind).toBe(SPAN_KIND.CONSUMER);
    expect(run.attributes).toMatchObject({ "messaging.destination.name": "refuse", "messaging.message.id": refused.id, "tickwork.job.attempt": 1, "tickwork.job.outcome": "failed", "error.type": "Error" });
    expect(run.status).toEqual({ code: STATUS.ERROR, message: "cannot take 7" });
    expect(run.events.map((e) => [e.name, e.attributes["exception.type"], e.attributes["exception.message"]])).toEqual([["exception", "Error", "cannot take 7"]]);
    expect(linkedTo(run)).toEqual([ids(enqueueRefused)]);
  });

  it("with an AsyncLocalStorage context manager (nodejs_als), the enqueue is a child of the caller's active span and a handler's own span a child of its run", async () => {
    const job = await call<EnqueuedJobRpc>("traced-als", "mail", "enqueueInCallerSpan", "mail", { to: "b@example.com" });
    const spans = await spansWhen("traced-als", "mail", (s) => named(s, "process mail").length > 0, "the run's span");

    const checkout = only(spans, "checkout");
    const enqueue = only(spans, "enqueue mail");
    expect(enqueue.kind).toBe(SPAN_KIND.PRODUCER);
    expect(enqueue.attributes["messaging.message.id"]).toBe(job.id);
    expect(enqueue.traceId).toBe(checkout.traceId);
    expect(enqueue.parentSpanId).toBe(checkout.spanId);

    const run = only(spans, "process mail");
    expect(run.kind).toBe(SPAN_KIND.CONSUMER);
    expect(run.parentSpanId).toBeNull();
    expect(run.traceId).not.toBe(checkout.traceId);
    expect(linkedTo(run)).toEqual([ids(enqueue)]);

    const smtp = only(spans, "smtp send");
    expect(smtp.traceId).toBe(run.traceId);
    expect(smtp.parentSpanId).toBe(run.spanId);
  });
});
