import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import type { IdempotencyRecord, ListCursor } from "../../idempotency/store.js";
import { MAX_SCOPE_LENGTH } from "../../idempotency/input.js";
import { cursorOf, inRange, limit, parseQuery, storable, text, toCursor } from "../validation.js";

const cursor = cursorOf((fields): ListCursor | null => {
  const [createdAt, key, operation] = fields;
  return inRange(createdAt) && storable(key) && storable(operation) ? { createdAt, key, operation } : null;
});

const KeysQuery = z.object({ scope: text(MAX_SCOPE_LENGTH), before: cursor.optional(), limit: limit(500, 50) });

export function idempotencyRoutes(api: Hono, tw: Tickwork): void {
  /** Keys of one scope, newest first; `next` is the `before` of the following page. */
  api.get("/idempotency", async (c) => {
    const { scope, before, limit } = parseQuery(c, KeysQuery);
    const records = await tw.store.idempotency.list({ scope, limit, before });
    const last = records.at(-1);
    return c.json({
      keys: records.map(view),
      next: last && records.length === limit ? toCursor([last.createdAt, last.key, last.operation]) : null,
    });
  });
}

/** The record without its claim id (an owner's fencing token, of no use to an operator). */
function view({ claimId: _claimId, result, ...record }: IdempotencyRecord) {
  return { ...record, result: result === null ? null : parseResult(result) };
}

function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
