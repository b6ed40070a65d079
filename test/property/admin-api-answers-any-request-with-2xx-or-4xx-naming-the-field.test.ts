import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { MAX_TIME_MS } from "../../src/core/bounds.js";
import { serve, type Serving } from "../../src/server/index.js";
import type { Tickwork } from "../../src/tickwork.js";
import { oddString, oddValue } from "./support/arbitraries.js";
import { PROPERTY_TIMEOUT, RUNS, assertProperty } from "./support/outcome.js";

/** A request costs a millisecond or two: three times the runs of the other properties. */
const HTTP_RUNS = RUNS * 3;
import { STORE_KINDS, propertyStore, runEngine, snapshotChange } from "./support/stores.js";

const TOKEN = "property-admin-token-0123456789";

interface Route {
  method: "GET" | "POST";
  /** With `:param` for the path parameter, if any. */
  path: string;
  param?: string;
  query?: string[];
  body?: string[];
}

const ROUTES: Route[] = [
  { method: "GET", path: "/api/jobs", query: ["queue", "status", "key", "before", "limit"] },
  { method: "GET", path: "/api/jobs/:id", param: "id" },
  { method: "POST", path: "/api/jobs/:id/retry", param: "id" },
  { method: "POST", path: "/api/jobs/:id/cancel", param: "id" },
  { method: "GET", path: "/api/tasks" },
  { method: "POST", path: "/api/tasks/:task/run", param: "task" },
  { method: "POST", path: "/api/tasks/:task/pause", param: "task", body: ["until"] },
  { method: "POST", path: "/api/tasks/:task/resume", param: "task" },
  { method: "GET", path: "/api/idempotency", query: ["scope", "before", "limit"] },
  { method: "GET", path: "/api/deliveries" },
  { method: "GET", path: "/api/deliveries/:delivery/retrying", param: "delivery", query: ["after", "limit"] },
  { method: "GET", path: "/api/deliveries/:delivery/pending", param: "delivery", query: ["after", "limit"] },
  { method: "GET", path: "/api/deliveries/:delivery/dropped", param: "delivery", query: ["before", "limit"] },
  { method: "POST", path: "/api/deliveries/:delivery/replay", param: "delivery", body: ["id", "since", "limit"] },
  { method: "GET", path: "/api/fanouts" },
  { method: "POST", path: "/api/fanouts/:fanout/reconcile", param: "fanout" },
  { method: "GET", path: "/api/queues" },
  { method: "POST", path: "/api/queues/:queue/retry-failed", param: "queue" },
  { method: "POST", path: "/api/queues/:queue/cancel-pending", param: "queue" },
  { method: "GET", path: "/api/overview" },
  { method: "GET", path: "/healthz" },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: "/metrics" },
];

/** Values the routes take, so that requests get past the first check to the later ones. */
const VALID: Record<string, string[]> = {
  id: ["1", "2", "3"],
  task: ["beat", "all"],
  delivery: ["hooks"],
  fanout: ["conf"],
  queue: ["mail"],
  status: ["pending", "failed", "cancelled"],
  key: ["a", "order-1"],
  before: ["2", "9223372036854775807"],
  limit: ["1", "10", "500"],
  scope: ["s"],
  after: ["x"],
};

/** Bytes as `%XX`: NUL, invalid UTF-8, encoded lone surrogates (`%ED%A0%80`), anything. */
const rawBytes = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 6 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("")),
  fc.constantFrom("%00", "%ED%A0%80", "%FF", "%C0%80", "%", "%zz", "%E0%A4", "a%00b", "%2F", "..", "%2e%2e"),
);

/** A value for the URL: percent-encoded text (well-formed or not), raw bytes, numbers past every bound. */
const urlValue = fc.oneof(
  rawBytes,
  oddString.map(encodeOrBytes),
  fc.constantFrom("99999999999999999999", "9223372036854775808", "-1", "0", "1e3", "1.5", "", "%20", "true", "[]"),
  fc.oneof(fc.integer(), fc.double()).map(String),
);

function encodeOrBytes(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate has no UTF-8 form: send the bytes a careless client would (CESU-8).
    return [...text].map((ch) => [...Buffer.from(ch, "utf16le")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")).join("");
  }
}

/** Body fields' values: times and durations past every bound, wrong types, and any JSON. */
const bodyValue = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(1e20, 1e300, -1, 0, 1.5, MAX_TIME_MS, MAX_TIME_MS + 1, 8.64e15, "1h", "99999999999999999999d", "36501d", "9999-12-31T23:59:59.999Z", "+275760-09-13T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "", "1", "9223372036854775808", null, true, [], {}), weight: 3 },
  { arbitrary: oddString, weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

function bodyOf(route: Route): fc.Arbitrary<{ text: string | undefined; keys: string[] }> {
  const fields = route.body ?? ["until"];
  return fc.oneof(
    { arbitrary: fc.constant<{ text: string | undefined; keys: string[] }>({ text: undefined, keys: [] }), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.subarray(fields, { minLength: 1 }), fc.array(bodyValue, { minLength: fields.length, maxLength: fields.length }), fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: fc.constantFrom("extra", "untill"), weight: 1 }))
        .map(([keys, values, extra]) => {
          const body: Record<string, unknown> = Object.fromEntries(keys.map((k, i) => [k, values[i]]));
          if (extra) body[extra] = 1;
          return { text: safeJson(body), keys: Object.keys(body) };
        }),
      weight: 8,
    },
    { arbitrary: fc.oneof(oddValue.map(safeJson), fc.constantFrom("{", "not json", "{\"until\":", "[1,2]", "\u0000", "{\"until\":1e999}", "{\"until\":\"\\ud800\"}")).map((text) => ({ text, keys: ["body"] })), weight: 2 },
  );
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return "null";
  }
}

interface Request {
  route: Route;
  method: string;
  url: string;
  body: string | undefined;
  /** Everything the request gave that a 400 may name: query keys, the path parameter, body keys. */
  names: string[];
}

function requestOf(route: Route): fc.Arbitrary<Request> {
  const param = route.param ? fc.oneof({ arbitrary: fc.constantFrom(...VALID[route.param]!), weight: 3 }, { arbitrary: urlValue, weight: 2 }) : fc.constant("");
  const queryKeys = route.query ?? [];
  const pairs = fc.array(
    fc.oneof(
      { arbitrary: fc.constantFrom(...(queryKeys.length ? queryKeys : ["limit"])).chain((k) => fc.oneof(fc.constantFrom(...(VALID[k] ?? ["1"])), urlValue).map((v) => [k, v] as const)), weight: 8 },
      { arbitrary: fc.tuple(fc.constantFrom("unknown", "LIMIT", "limit[]", "%00", ""), urlValue), weight: 1 },
    ),
    { maxLength: queryKeys.length ? 4 : 1 },
  );
  const method = fc.oneof({ arbitrary: fc.constant(route.method), weight: 12 }, { arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"), weight: 1 });
  return fc.tuple(param, pairs, method, route.method === "POST" ? bodyOf(route) : fc.constant({ text: undefined, keys: [] as string[] })).map(([p, query, m, body]) => {
    const path = route.param ? route.path.replace(`:${route.param}`, p) : route.path;
    const search = query.map(([k, v]) => `${k}=${v}`).join("&");
    return {
      route,
      method: m,
      url: search ? `${path}?${search}` : path,
      body: body.text,
      // A field left out may be the one at fault (a pause with no until, a key list with no scope).
      names: [...(route.param ? [route.param] : []), ...queryKeys, ...query.map(([k]) => decodeOr(k)), ...body.keys, ...(route.method === "POST" && route.body ? [...route.body, "body"] : [])],
    };
  });
}

function decodeOr(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every route; those that take a body (a pause, a replay) more often, having more to get wrong. */
const request = fc.oneof(...ROUTES.map((route) => ({ arbitrary: requestOf(route), weight: route.body ? 4 : 1 })));

interface Answer {
  status: number;
  text: string;
  json: unknown;
}

async function send(base: string, r: Request): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  if (r.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(base.replace(/\/$/, "") + r.url, { method: r.method, headers, body: r.method === "GET" ? undefined : r.body });
  } catch (error) {
    // No answer at all (the connection was reset, the server is gone): say why, not just "fetch failed".
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${r.method} ${r.url} got no answer: ${(error as Error).message}${cause ? ` (${cause.code ?? ""} ${cause.message ?? ""})` : ""}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

describe.each(STORE_KINDS)("the admin API at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;
  let serving: Serving;

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
    const mail = tw.queue("mail", { handler: () => {} });
    tw.queue("other");
    tw.task("beat", { every: "1m", run: () => "ok" });
    tw.delivery("hooks", { send: () => {} });
    tw.fanout("conf", { groups: { g: { targets: ["t1"] } }, send: () => {} });
    await mail.enqueueMany([{ payload: 1, key: "a" }, { payload: 2, key: "order-1" }, { payload: 3 }]);
    // The rows tasks and fan-outs create lazily, on their first read, exist before the first request.
    await tw.scheduler.status();
    await tw.fanouts.get("conf")!.status();
    serving = await serve(tw, { port: 0, token: TOKEN });
  });

  afterAll(async () => {
    await serving?.close();
  });

  it("any request is answered 2xx or 4xx, never 5xx, and a 4xx writes nothing", async () => {
    await assertProperty(
      fc.asyncProperty(request, async (r) => {
        const before = await ps.snapshot();
        const answer = await send(serving.url, r);
        if (answer.status >= 500) throw new Error(`${r.method} ${r.url} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        if (answer.status >= 400) {
          const change = snapshotChange(before, await ps.snapshot());
          if (change) throw new Error(`${r.method} ${r.url} answered ${answer.status} but wrote:\n${change}`);
        }
      }),
      "safety",
      HTTP_RUNS,
    );
  });

  it("a 400 is a JSON answer that names the field at fault", async () => {
    await assertProperty(
      fc.asyncProperty(request, async (r) => {
        const answer = await send(serving.url, r);
        if (answer.status !== 400) return;
        const body = answer.json as { error?: unknown; message?: unknown } | undefined;
        if (typeof body?.error !== "string" || typeof body.message !== "string") throw new Error(`${r.method} ${r.url} answered 400 without { error, message }: ${answer.text.slice(0, 300)}`);
        const text = answer.text.toLowerCase();
        if (!r.names.some((name) => name !== "" && text.includes(name.toLowerCase()))) {
          throw new Error(`${r.method} ${r.url} answered 400 naming none of ${JSON.stringify(r.names)}: ${answer.text.slice(0, 300)}`);
        }
      }),
      "safety",
      HTTP_RUNS,
    );
  });
});
