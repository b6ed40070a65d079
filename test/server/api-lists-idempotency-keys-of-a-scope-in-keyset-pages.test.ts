import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

type Key = { scope: string; key: string; operation: string; status: string; result: unknown; createdAt: number; claimId?: string };
type Page = { keys: Key[]; next: string | null };

describe.each(allStoreCases())("GET /api/idempotency ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("lists one scope's keys newest first with their results, in pages with no overlap and no gap", async () => {
    const a = await admin();
    // Several keys share a creation time: the keyset orders them by key and operation too.
    for (let i = 0; i < 7; i++) {
      await a.tw.idempotency.run({ scope: "acct-1", key: `req-${i}`, operation: "OPEN_POSITION" }, () => ({ position: i }));
      await a.tw.idempotency.run({ scope: "acct-1", key: `req-${i}`, operation: "CLOSE_POSITION" }, () => undefined);
      await a.tw.idempotency.run({ scope: "acct-2", key: `req-${i}`, operation: "OPEN_POSITION" }, () => ({ other: true }));
      if (i % 3 === 2) await a.clock.advance("1s");
    }

    const seen: Key[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: Page } = await a.get<Page>(`/api/idempotency?scope=acct-1&limit=4${next ? `&before=${next}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.keys);
      next = res.body.next;
      pages++;
    } while (next !== null);

    expect(pages).toBe(4);
    expect(seen).toHaveLength(14);
    expect(new Set(seen.map((k) => `${k.key}/${k.operation}`)).size).toBe(14);
    expect(seen.every((k) => k.scope === "acct-1" && k.status === "completed" && k.claimId === undefined)).toBe(true);
    const order = seen.map((k) => [k.createdAt, k.key, k.operation] as const);
    const sorted = [...order].sort((x, y) => y[0] - x[0] || (y[1] < x[1] ? -1 : y[1] > x[1] ? 1 : 0) || (y[2] < x[2] ? -1 : 1));
    expect(order).toEqual(sorted);
    expect(seen.find((k) => k.key === "req-4" && k.operation === "OPEN_POSITION")?.result).toEqual({ position: 4 });
    expect(seen.find((k) => k.key === "req-4" && k.operation === "CLOSE_POSITION")?.result).toBeNull();
  });

  it("needs a scope and refuses a cursor it did not give", async () => {
    const a = await admin();
    const missing = await a.get("/api/idempotency");
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: "invalid_query", issues: [{ path: "scope" }] });

    const forged = await a.get("/api/idempotency?scope=acct-1&before=not-a-cursor");
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ error: "invalid_query", message: "before: not a cursor from a previous page (use the next value of the last response)" });
  });
});
