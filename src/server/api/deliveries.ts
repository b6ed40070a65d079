import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import type { Delivery } from "../../delivery/delivery.js";
import type { DeliveryRow, DroppedRow } from "../../delivery/store.js";
import { ApiError } from "../errors.js";
import { previewOf } from "./preview.js";
import { cursorOf, inRange, instant, limit, parseBody, parseParam, parseQuery, resolvePastInstant, storable, text, toCursor } from "../validation.js";
import type { DeliveryItemView, DeliverySummary } from "./types.js";

/** Items shown per delivery in the overview; the rest are a page of the item routes away. */
const SHOWN = 5;

const OutboxQuery = z.object({ after: text(100).optional(), limit: limit(500, 100) });
const DroppedQuery = z.object({
  before: cursorOf((f): { droppedAt: number; id: string } | null => (inRange(f[0]) && storable(f[1]) ? { droppedAt: f[0], id: f[1] } : null)).optional(),
  limit: limit(500, 100),
});
const REPLAY_SHAPE = 'expected { "id": "<dropped item id>" } or { "since": <epoch ms, ISO time, or a duration ago such as "1h">, "limit"?: n }';
/** One object rather than a union of two, so that a bad `id` or `since` is reported by its name. */
const ReplayBody = z
  .object({ id: text(100).optional(), since: instant.optional(), limit: z.number().int().min(1).max(10_000).optional() }, { error: REPLAY_SHAPE })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.id === undefined) === (body.since === undefined)) ctx.addIssue({ code: "custom", message: REPLAY_SHAPE });
    else if (body.id !== undefined && body.limit !== undefined) ctx.addIssue({ code: "custom", path: ["limit"], message: "goes with since, not with id" });
  });

const PURGE_SHAPE = 'expected { "id": "<dropped item id>" } or { "before": <epoch ms, ISO time, or a duration ago such as "7d">, "limit"?: n }';
const PurgeBody = z
  .object({ id: text(100).optional(), before: instant.optional(), limit: z.number().int().min(1).max(10_000).optional() }, { error: PURGE_SHAPE })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.id === undefined) === (body.before === undefined)) ctx.addIssue({ code: "custom", message: PURGE_SHAPE });
    else if (body.id !== undefined && body.limit !== undefined) ctx.addIssue({ code: "custom", path: ["limit"], message: "goes with before, not with id" });
  });

function declared(tw: Tickwork, name: string): Delivery<unknown> {
  const delivery = tw.deliveries.get(name);
  if (!delivery) {
    const names = [...tw.deliveries.keys()];
    throw new ApiError(404, "not_found", `delivery "${name}" is not declared in this process` + (names.length ? ` (declared: ${names.join(", ")})` : " (no delivery is declared)"));
  }
  return delivery;
}

export async function deliverySummary(tw: Tickwork, delivery: Delivery<unknown>): Promise<DeliverySummary> {
  const [status, retrying, dropped] = await Promise.all([
    delivery.status(),
    tw.store.delivery.listOutstanding({ delivery: delivery.name, retrying: true, limit: SHOWN }),
    tw.store.delivery.listDropped({ delivery: delivery.name, limit: SHOWN }),
  ]);
  const { name, budget, retryBatch, pending, retrying: retryingCount, dropped: droppedCount, nextAt, lastPass } = status;
  return {
    name,
    budget,
    retryBatch,
    pending,
    retrying: retryingCount,
    dropped: droppedCount,
    nextAt,
    lastPass: lastPass && { at: lastPass.at, sent: lastPass.sent, delivered: lastPass.delivered, failed: lastPass.failed, dropped: lastPass.dropped, carried: lastPass.carried },
    nextRetries: retrying.map(outboxView).sort((a, b) => (a.runAt ?? 0) - (b.runAt ?? 0)),
    latestDropped: dropped.map(droppedView),
  };
}

/** An outbox row: `attempt` is the send it waits for. */
function outboxView(row: DeliveryRow): DeliveryItemView {
  return { id: row.id, key: row.key, ...previewOf(row.payload), attempt: row.attempts + 1, lastError: row.lastError, createdAt: row.createdAt, runAt: row.runAt };
}

/** A dead letter: `attempt` is the last send made. */
function droppedView(row: DroppedRow): DeliveryItemView {
  return { id: row.id, key: row.key, ...previewOf(row.payload), attempt: row.attempts, lastError: row.lastError, createdAt: row.createdAt, droppedAt: row.droppedAt };
}

export function deliveryRoutes(api: Hono, tw: Tickwork): void {
  api.get("/deliveries", async (c) => c.json({ deliveries: await Promise.all([...tw.deliveries.values()].map((d) => deliverySummary(tw, d))) }));

  /** Items waiting for a retry (`/retrying`) or their first send (`/pending`), by id; `next` is the following page's `after`. */
  for (const kind of ["retrying", "pending"] as const) {
    api.get(`/deliveries/:delivery/${kind}`, async (c) => {
      const delivery = declared(tw, parseParam(c, "delivery", text(200)));
      const { after, limit } = parseQuery(c, OutboxQuery);
      const items = (await tw.store.delivery.listOutstanding({ delivery: delivery.name, retrying: kind === "retrying", after, limit })).map(outboxView);
      return c.json({ items, next: items.length === limit ? items.at(-1)!.id : null });
    });
  }

  /** The dead-letter table, newest first; `next` is the following page's `before`. */
  api.get("/deliveries/:delivery/dropped", async (c) => {
    const delivery = declared(tw, parseParam(c, "delivery", text(200)));
    const { before, limit } = parseQuery(c, DroppedQuery);
    const items = (await tw.store.delivery.listDropped({ delivery: delivery.name, before, limit })).map(droppedView);
    const last = items.at(-1);
    return c.json({ items, next: last && items.length === limit ? toCursor([last.droppedAt, last.id]) : null });
  });

  /** One item with its whole payload: lists show previews, so a huge dead letter is read only here. */
  api.get("/deliveries/:delivery/items/:id", async (c) => {
    const delivery = declared(tw, parseParam(c, "delivery", text(200)));
    const id = parseParam(c, "id", text(100));
    const row = await tw.store.delivery.getItem({ delivery: delivery.name, id });
    if (!row) throw new ApiError(404, "not_found", `delivery "${delivery.name}" holds no item ${JSON.stringify(id)} (delivered items are not kept)`);
    const view = row.droppedAt === null ? outboxView(row) : droppedView({ ...row, droppedAt: row.droppedAt });
    return c.json({ item: { ...view, payload: JSON.parse(row.payload) as unknown } });
  });

  /** Sends dropped items again (one by id, or all dropped since a time); they keep their ids. */
  api.post("/deliveries/:delivery/replay", async (c) => {
    const delivery = declared(tw, parseParam(c, "delivery", text(200)));
    const body = await parseBody(c, ReplayBody, '{"id":"..."} or {"since":"1h"}');
    if (body.id !== undefined) return c.json({ delivery: delivery.name, replayed: await delivery.replay({ id: body.id }) });
    // A duration looks back: { "since": "1h" } replays what was dropped in the last hour.
    return c.json({ delivery: delivery.name, replayed: await delivery.replay({ since: resolvePastInstant(body.since!, tw.clock.now()), limit: body.limit }) });
  });

  /** Deletes dead letters for good (one by id, or all dropped before a time); they can no longer be replayed. */
  api.post("/deliveries/:delivery/purge", async (c) => {
    const delivery = declared(tw, parseParam(c, "delivery", text(200)));
    const body = await parseBody(c, PurgeBody, '{"id":"..."} or {"before":"7d"}');
    if (body.id !== undefined) return c.json({ delivery: delivery.name, purged: await delivery.purge({ id: body.id }) });
    // A duration looks back: { "before": "7d" } purges what was dropped more than a week ago.
    return c.json({ delivery: delivery.name, purged: await delivery.purge({ before: resolvePastInstant(body.before!, tw.clock.now()), limit: body.limit }) });
  });
}
