import { describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import type { DeliveryItemView, DeliverySummary, FanoutSummary } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { T0 } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";
import { parseExposition, value } from "./support/prometheus-text.js";

type Items = { items: DeliveryItemView[]; next: string | null };

describe.each(allStoreCases())("/api/deliveries and /api/fanouts ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("shows a delivery's pending retries and dead letters with their errors, pages them, and replays them", async () => {
    const a = await admin();
    let down = true;
    const daily = a.tw.delivery<{ user: string }>("daily", {
      retry: schedule(["1m"]),
      send: (m) => {
        if (down) throw new Error(`portfolio ${m.payload.user} unavailable`);
      },
    });
    await daily.emit([1, 2, 3].map((n) => ({ key: `daily:u-${n}`, payload: { user: `u-${n}` } })));
    await a.tw.tick();

    const [status] = (await a.get<{ deliveries: DeliverySummary[] }>("/api/deliveries")).body.deliveries;
    expect(status).toMatchObject({ name: "daily", pending: 0, retrying: 3, dropped: 0, nextAt: T0 + 60_000, lastPass: { sent: 3, failed: 3, carried: false } });
    expect(status!.nextRetries).toHaveLength(3);
    expect(status!.nextRetries[0]).toMatchObject({ attempt: 2, runAt: T0 + 60_000, lastError: expect.stringContaining("unavailable") });
    const retrying = (await a.get<Items>("/api/deliveries/daily/retrying?limit=2")).body;
    expect(retrying.items).toHaveLength(2);
    const rest = (await a.get<Items>(`/api/deliveries/daily/retrying?limit=2&after=${retrying.next}`)).body;
    expect(rest).toMatchObject({ items: [expect.objectContaining({ key: expect.stringMatching(/^daily:u-/) })], next: null });
    expect(new Set([...retrying.items, ...rest.items].map((i) => i.id)).size).toBe(3);

    await a.clock.advance("1m");
    await a.tw.tick();
    const dropped = (await a.get<{ deliveries: DeliverySummary[] }>("/api/deliveries")).body.deliveries[0]!;
    expect(dropped).toMatchObject({ retrying: 0, dropped: 3, nextRetries: [] });
    expect(dropped.latestDropped[0]).toMatchObject({ attempt: 2, droppedAt: T0 + 60_000, payloadPreview: expect.stringMatching(/^\{"user":"u-\d"\}$/), payloadTruncated: false });
    const page1 = (await a.get<Items>("/api/deliveries/daily/dropped?limit=2")).body;
    const page2 = (await a.get<Items>(`/api/deliveries/daily/dropped?limit=2&before=${page1.next}`)).body;
    expect([...page1.items, ...page2.items].map((i) => i.id).sort()).toEqual(dropped.latestDropped.map((i) => i.id).sort());
    expect(page2.next).toBeNull();

    down = false;
    const one = await a.post<{ replayed: string[] }>("/api/deliveries/daily/replay", { id: page1.items[0]!.id });
    expect(one.body).toEqual({ delivery: "daily", replayed: [page1.items[0]!.id] });
    const all = await a.post<{ replayed: string[] }>("/api/deliveries/daily/replay", { since: 0 });
    expect(all.body.replayed).toHaveLength(2);
    await a.tw.tick();
    expect((await a.get<{ deliveries: DeliverySummary[] }>("/api/deliveries")).body.deliveries[0]).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });

    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_delivery_items_emitted_total", { delivery: "daily" })).toBe(3);
    expect(value(m, "tickwork_delivery_retries_total", { delivery: "daily" })).toBe(3);
    expect(value(m, "tickwork_delivery_dropped_total", { delivery: "daily" })).toBe(3);
    expect(value(m, "tickwork_delivery_items", { delivery: "daily", state: "dropped" })).toBe(0);
    expect(value(m, "tickwork_delivery_budget", { delivery: "daily" })).toBe(500);
    expect(value(m, "tickwork_delivery_last_pass_sent", { delivery: "daily" })).toBe(3);
    // Every send counted by how it ended: three failed, then dropped at their last retry, then
    // replayed and delivered.
    expect(value(m, "tickwork_delivery_sends_total", { delivery: "daily", outcome: "failed" })).toBe(3);
    expect(value(m, "tickwork_delivery_sends_total", { delivery: "daily", outcome: "dropped" })).toBe(3);
    expect(value(m, "tickwork_delivery_sends_total", { delivery: "daily", outcome: "delivered" })).toBe(3);
  });

  it("purges dead letters by id or by age, and refuses a bad purge body with 400 deleting nothing", async () => {
    const a = await admin();
    const daily = a.tw.delivery<{ n: number }>("daily", { retry: () => null, send: () => Promise.reject(new Error("down")) });
    await daily.emit([{ key: "a", payload: { n: 1 } }]);
    await a.tw.tick();
    await a.clock.advance("2h");
    await daily.emit([{ key: "b", payload: { n: 2 } }, { key: "c", payload: { n: 3 } }]);
    await a.tw.tick();
    const ids = new Map((await daily.dropped()).map((d) => [d.key, d.id]));

    for (const body of [{}, { id: "x", before: "1h" }, { before: "soon" }, { before: "1h", limit: 0 }, { id: ids.get("b"), limit: 5 }, { id: "" }]) {
      const bad = await a.post("/api/deliveries/daily/purge", body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    expect((await daily.status()).dropped).toBe(3);

    expect((await a.post("/api/deliveries/daily/purge", { before: "1h" })).body).toEqual({ delivery: "daily", purged: [ids.get("a")] });
    expect((await a.post("/api/deliveries/daily/purge", { id: ids.get("b") })).body).toEqual({ delivery: "daily", purged: [ids.get("b")] });
    expect((await a.post("/api/deliveries/daily/purge", { id: ids.get("b") })).body).toEqual({ delivery: "daily", purged: [] });
    expect((await daily.dropped()).map((d) => d.key)).toEqual(["c"]);
    expect((await a.post("/api/deliveries/nope/purge", { before: 0 })).status).toBe(404);
  });

  it("counts a delivery's budget running out", async () => {
    const a = await admin();
    const hourly = a.tw.delivery("hourly", { budget: 2, send: () => {} });
    await hourly.emit([1, 2, 3, 4, 5].map((n) => ({ payload: n })));
    await a.tw.tick();
    const [status] = (await a.get<{ deliveries: DeliverySummary[] }>("/api/deliveries")).body.deliveries;
    expect(status).toMatchObject({ pending: 3, lastPass: { sent: 2, delivered: 2, carried: true }, budget: 2 });
    expect(value(parseExposition((await a.get("/metrics")).text), "tickwork_delivery_budget_exhausted_total", { delivery: "hourly" })).toBe(1);
  });

  it("shows a fan-out's targets behind with their errors and its next retry, and schedules a reconciliation", async () => {
    const a = await admin();
    const down = new Set(["alert-2"]);
    const symbols = a.tw.fanout<string[]>("symbols", {
      reconcile: "15m",
      groups: { collectors: { targets: ["collector-1"] }, alerts: { targets: ["alert-1", "alert-2"] } },
      send: (target) => {
        if (down.has(target as string)) throw new Error(`${String(target)} unreachable`);
      },
    });
    await symbols.push(["BTC", "ETH"]);
    await a.tw.tick();

    const [status] = (await a.get<{ fanouts: FanoutSummary[] }>("/api/fanouts")).body.fanouts;
    expect(status).toMatchObject({ name: "symbols", version: 1, converged: false, consecutiveFailures: 1, nextReason: "retry", nextAt: T0 + 30_000 });
    expect(status!.targets.find((t) => t.id === "alert-2")).toMatchObject({ group: "alerts", behind: true, failures: 1, lastError: expect.stringContaining("alert-2 unreachable") });
    expect(status!.targets.filter((t) => t.behind)).toHaveLength(1);

    const m = parseExposition((await a.get("/metrics")).text);
    expect(value(m, "tickwork_fanout_push_failures_total", { fanout: "symbols" })).toBe(1);
    expect(value(m, "tickwork_fanout_retries_total", { fanout: "symbols" })).toBe(1);
    expect(value(m, "tickwork_fanout_targets_behind", { fanout: "symbols" })).toBe(1);
    expect(value(m, "tickwork_fanout_consecutive_failures", { fanout: "symbols" })).toBe(1);

    down.clear();
    expect((await a.post("/api/fanouts/symbols/reconcile")).body).toEqual({ fanout: "symbols", reconcile: "scheduled" });
    expect((await a.get<{ fanouts: FanoutSummary[] }>("/api/fanouts")).body.fanouts[0]).toMatchObject({ nextReason: "reconcile", nextAt: T0 });
    await a.tw.tick();
    expect((await a.get<{ fanouts: FanoutSummary[] }>("/api/fanouts")).body.fanouts[0]).toMatchObject({ converged: true, consecutiveFailures: 0, nextReason: "reconcile" });
  });

  it("answers 404 for an undeclared delivery or fan-out and 400 for a bad replay body", async () => {
    const a = await admin();
    a.tw.delivery("daily", { send: () => {} });
    expect(await a.get("/api/deliveries/nope/dropped")).toMatchObject({ status: 404, body: { error: "not_found", message: 'delivery "nope" is not declared in this process (declared: daily)' } });
    expect(await a.post("/api/fanouts/nope/reconcile")).toMatchObject({ status: 404, body: { message: 'fanout "nope" is not declared in this process (no fanout is declared)' } });
    const bad = await a.post("/api/deliveries/daily/replay", { everything: true });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/expected \{ "id": "<dropped item id>" \} or \{ "since"/);
    expect((await a.get("/api/deliveries/daily/dropped?before=forged")).status).toBe(400);
  });
});
