import { describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import type { DeliveryItemView, DeliverySummary, JobListItem, Overview } from "../../src/server/index.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/** A payload whose JSON text is about 2 MB: a dashboard polling every 2 s must not carry it. */
const HUGE = { report: "x".repeat(2_000_000) };
const HUGE_TEXT = JSON.stringify(HUGE);
/** Generous for an overview of a few items: a hundredth of the huge payload. */
const SMALL_ANSWER = 20_000;

describe.each(allStoreCases())("list answers preview payloads, item answers carry them ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("a dropped 2 MB item leaves the overview and the delivery lists small, with a preview and the size", async () => {
    const a = await admin();
    const hooks = a.tw.delivery<unknown>("hooks", { retry: () => null, send: () => { throw new Error("receiver down"); } });
    await hooks.emit([{ key: "huge", payload: HUGE }, { key: "small", payload: { n: 1 } }]);
    await a.tw.tick();
    expect((await hooks.status()).dropped).toBe(2);

    const overview = await a.get<Overview>("/api/overview");
    expect(overview.status).toBe(200);
    expect(overview.text.length).toBeLessThan(SMALL_ANSWER);
    const dropped = overview.body.deliveries[0]!.latestDropped;
    const huge = dropped.find((i) => i.key === "huge")!;
    expect(huge).not.toHaveProperty("payload");
    expect(huge).toMatchObject({ payloadPreview: HUGE_TEXT.slice(0, 200), payloadChars: HUGE_TEXT.length, payloadTruncated: true });
    expect(dropped.find((i) => i.key === "small")).toMatchObject({ payloadPreview: '{"n":1}', payloadChars: 7, payloadTruncated: false });

    for (const path of ["/api/deliveries", "/api/deliveries/hooks/dropped"]) {
      const res = await a.get<{ deliveries?: DeliverySummary[]; items?: DeliveryItemView[] }>(path);
      expect(res.status, path).toBe(200);
      expect(res.text.length, path).toBeLessThan(SMALL_ANSWER);
    }
  });

  it("a delivery item's own route gives its whole payload, outstanding or dropped, and 404 for an id it does not hold", async () => {
    const a = await admin();
    const hooks = a.tw.delivery<unknown>("hooks", { retry: () => null, send: () => { throw new Error("receiver down"); } });
    await hooks.emit([{ key: "huge", payload: HUGE }]);
    const [waiting] = (await a.get<{ items: DeliveryItemView[] }>("/api/deliveries/hooks/pending")).body.items;
    const outstanding = await a.get<{ item: DeliveryItemView & { payload: unknown } }>(`/api/deliveries/hooks/items/${waiting!.id}`);
    expect(outstanding.status).toBe(200);
    expect(outstanding.body.item).toMatchObject({ id: waiting!.id, key: "huge", payloadChars: HUGE_TEXT.length });
    expect(outstanding.body.item.payload).toEqual(HUGE);
    expect(outstanding.body.item).not.toHaveProperty("droppedAt");

    await a.tw.tick();
    const dropped = await a.get<{ item: DeliveryItemView & { payload: unknown } }>(`/api/deliveries/hooks/items/${waiting!.id}`);
    expect(dropped.status).toBe(200);
    expect(dropped.body.item.payload).toEqual(HUGE);
    expect(dropped.body.item.droppedAt).toEqual(expect.any(Number));

    const missing = await a.get<{ error: string }>("/api/deliveries/hooks/items/nope");
    expect(missing.status).toBe(404);
  });

  it("waiting delivery items are previewed too", async () => {
    const a = await admin();
    const hooks = a.tw.delivery<unknown>("hooks", { retry: schedule(["1h"]), send: () => { throw new Error("receiver down"); } });
    await hooks.emit([{ key: "huge", payload: HUGE }]);
    const pending = await a.get<{ items: DeliveryItemView[] }>("/api/deliveries/hooks/pending");
    expect(pending.text.length).toBeLessThan(SMALL_ANSWER);
    expect(pending.body.items[0]).toMatchObject({ payloadChars: HUGE_TEXT.length, payloadTruncated: true });
    await a.tw.tick();
    const retrying = await a.get<{ items: DeliveryItemView[] }>("/api/deliveries/hooks/retrying");
    expect(retrying.text.length).toBeLessThan(SMALL_ANSWER);
    expect(retrying.body.items[0]).toMatchObject({ payloadChars: HUGE_TEXT.length, payloadTruncated: true, attempt: 2 });
  });

  it("the job list previews a 2 MB payload; the job's own route gives it in full", async () => {
    const a = await admin();
    const queue = a.tw.queue("reports");
    const job = await queue.enqueue(HUGE);
    await queue.enqueue({ n: 1 });
    const list = await a.get<{ jobs: JobListItem[] }>("/api/jobs?queue=reports");
    expect(list.text.length).toBeLessThan(SMALL_ANSWER);
    const [small, huge] = list.body.jobs;
    expect(huge).not.toHaveProperty("payload");
    expect(huge).toMatchObject({ id: job.id, payloadPreview: HUGE_TEXT.slice(0, 200), payloadChars: HUGE_TEXT.length, payloadTruncated: true });
    expect(small).toMatchObject({ payloadPreview: '{"n":1}', payloadTruncated: false });
    const one = await a.get<{ job: { payload: unknown } }>(`/api/jobs/${job.id}`);
    expect(one.body.job.payload).toEqual(HUGE);
  });
});
