import { describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import type { DeliveryItemView, DeliverySummary, JobAnswer, JobListItem, Overview } from "../../src/server/index.js";
import { DETAIL_PAYLOAD_CHARS } from "../../src/server/api/jobs.js";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";
import { DURABLE_OBJECT_MAX_PAYLOAD_BYTES } from "../../src/runtime/cloudflare/store.js";

/** A payload whose JSON text is about 2 MB: a dashboard polling every 2 s must not carry it. */
const HUGE = { report: "x".repeat(2_000_000) };
const HUGE_TEXT = JSON.stringify(HUGE);
/** A job payload of about 1.5 MB, within the largest bound a queue may set on a Durable Object. */
const HUGE_JOB = { report: "x".repeat(1_500_000) };
const HUGE_JOB_TEXT = JSON.stringify(HUGE_JOB);
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

  it("the job list previews a 1.5 MB payload; the job's own answer cuts it at 64 Ki characters; its payload route gives it whole", async () => {
    const a = await admin();
    // As large as a job payload may be on every store (a queue takes 1 MiB unless told otherwise).
    const queue = a.tw.queue("reports", { maxPayloadBytes: DURABLE_OBJECT_MAX_PAYLOAD_BYTES });
    const job = await queue.enqueue(HUGE_JOB);
    const small = await queue.enqueue({ n: 1 });
    const list = await a.get<{ jobs: JobListItem[] }>("/api/jobs?queue=reports");
    expect(list.text.length).toBeLessThan(SMALL_ANSWER);
    const [smallItem, hugeItem] = list.body.jobs;
    expect(hugeItem).not.toHaveProperty("payload");
    expect(hugeItem).toMatchObject({ id: job.id, payloadPreview: HUGE_JOB_TEXT.slice(0, 200), payloadChars: HUGE_JOB_TEXT.length, payloadTruncated: true });
    expect(smallItem).toMatchObject({ payloadPreview: '{"n":1}', payloadTruncated: false });

    const one = await a.get<JobAnswer>(`/api/jobs/${job.id}`);
    expect(one.status).toBe(200);
    expect(one.text.length).toBeLessThan(DETAIL_PAYLOAD_CHARS + SMALL_ANSWER);
    expect(one.body.job).not.toHaveProperty("payload");
    expect(one.body.job).toMatchObject({ id: job.id, payloadTruncated: true, payloadChars: HUGE_JOB_TEXT.length, payloadPreview: HUGE_JOB_TEXT.slice(0, DETAIL_PAYLOAD_CHARS) });

    const whole = await a.get<unknown>(`/api/jobs/${job.id}/payload`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(whole.body).toEqual(HUGE_JOB);

    // A payload under the cut comes as the value itself, and its payload route gives the same.
    const smallOne = await a.get<JobAnswer>(`/api/jobs/${small.id}`);
    expect(smallOne.body.job).toMatchObject({ payload: { n: 1 }, payloadTruncated: false, payloadChars: 7 });
    expect(smallOne.body.job).not.toHaveProperty("payloadPreview");
    expect((await a.get(`/api/jobs/${small.id}/payload`)).text).toBe('{"n":1}');
    expect((await a.get("/api/jobs/987654321/payload")).status).toBe(404);
  });

  it("a job's answer cuts at exactly 64 Ki characters, never inside a surrogate pair", async () => {
    const a = await admin();
    const queue = a.tw.queue("reports");
    // JSON text `"xx…x😀…"`: the quote, then 64 Ki - 2 x's, so the emoji's pair straddles the cut.
    const text = "x".repeat(DETAIL_PAYLOAD_CHARS - 2) + "😀".repeat(10);
    const fits = "y".repeat(DETAIL_PAYLOAD_CHARS - 2);
    const cut = await queue.enqueue(text);
    const whole = await queue.enqueue(fits);
    const answer = (await a.get<JobAnswer>(`/api/jobs/${cut.id}`)).body.job;
    expect(answer).toMatchObject({ payloadTruncated: true, payloadChars: JSON.stringify(text).length, payloadPreview: `"${"x".repeat(DETAIL_PAYLOAD_CHARS - 2)}` });
    expect((await a.get<JobAnswer>(`/api/jobs/${whole.id}`)).body.job).toMatchObject({ payloadTruncated: false, payloadChars: DETAIL_PAYLOAD_CHARS, payload: fits });
  });
});
