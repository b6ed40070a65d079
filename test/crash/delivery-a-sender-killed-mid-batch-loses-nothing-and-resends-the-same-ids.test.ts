import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { FixtureProcess, spawnFixture } from "./fixtures/child-process.js";
import type { SenderConfig } from "./fixtures/delivery-sender.js";
import { eventually } from "./fixtures/processes.js";
import { WebhookReceiver } from "./fixtures/webhook-receiver.js";

/**
 * A real sender process runs a delivery on a SQLite file and is killed with SIGKILL while a batch
 * of webhooks is in flight to a real receiver. A second process on the same file finishes the job:
 * everything emitted is delivered, nothing is lost, and the items the dead process had in flight
 * are sent again, once their lease lapses, with the same webhook-id, so an idempotent receiver
 * applies each effect once.
 */
const ITEMS = 200;
const BUDGET = 20;
const SENDER = fileURLToPath(new URL("./fixtures/delivery-sender.ts", import.meta.url));

describe("a delivery process killed mid-batch (sqlite file)", () => {
  const undo: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of undo.splice(0).reverse()) await step();
  });

  it("loses nothing: after a restart every item is delivered, re-sent ones under their first webhook-id", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-delivery-crash-"));
    undo.push(() => rmSync(dir, { recursive: true, force: true }));
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const receiver = new WebhookReceiver(secret, 100);
    const url = await receiver.listen();
    undo.push(() => receiver.close());
    const path = join(dir, "tickwork.db");
    const spawn = (label: string, emit: number) => {
      const config: SenderConfig = { path, url, secret, emit, budget: BUDGET };
      const child = new FixtureProcess(spawnFixture(SENDER, config), label, 20_000);
      undo.push(() => child.kill());
      return child;
    };

    const first = spawn("sender 1", ITEMS);
    await first.ready;
    expect(first.named("fixture.emitted")[0]).toMatchObject({ emitted: ITEMS, skipped: 0 });
    // Kill once a few batches are through and the next one is in flight at the receiver.
    await eventually(() => receiver.effects.size >= 2 * BUDGET && receiver.inflight > 0, "a batch in flight after two delivered", 10_000, 2);
    const inflightAtKill = receiver.inflight;
    await first.kill();
    expect(await first.exited, "ended by SIGKILL, not by an exit of its own").toBeNull();
    expect(inflightAtKill).toBeGreaterThan(0);
    expect(receiver.effects.size).toBeLessThan(ITEMS);
    // The outbox as the dead process left it: its items in flight are not to be sent again before
    // their leases end; an item whose send it saw fail (its 1 s timeout, on a loaded machine, after
    // the receiver had the request) waits for its retry instead, at its run_at.
    const db = new Database(path, { readonly: true });
    undo.push(() => void db.close());
    const rows = new Map(
      (db.prepare(`SELECT id, lease_until AS until, attempts, run_at AS runAt FROM tickwork_deliveries`).all() as { id: number | string; until: number; attempts: number; runAt: number }[]).map((r) => [String(r.id), r]),
    );
    const leases = new Map([...rows].filter(([, r]) => r.until > 0).map(([id, r]) => [id, r.until]));
    expect(leases.size).toBeGreaterThanOrEqual(inflightAtKill);

    const second = spawn("sender 2", 0);
    await second.ready;
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    await eventually(() => receiver.effects.size === ITEMS && count("tickwork_deliveries") === 0, `all ${ITEMS} items delivered and the outbox empty`, 30_000, 20);

    // Nothing lost, nothing refused, nothing dropped.
    expect(receiver.refused).toEqual([]);
    expect(count("tickwork_delivery_dead")).toBe(0);
    expect(new Set(receiver.effects.values())).toEqual(new Set(Array.from({ length: ITEMS }, (_, n) => n)));
    // One id per item, whoever sent it and however often: re-deliveries carry the first id.
    const idsOf = new Map<number, Set<string>>();
    for (const a of receiver.arrivals) idsOf.set(a.n, (idsOf.get(a.n) ?? new Set()).add(a.id));
    expect([...idsOf.values()].every((ids) => ids.size === 1)).toBe(true);

    // The kill interrupted sends: items the first process had sent but not recorded were sent again,
    // by the second process, under the same id, once the dead process's lease on each (12 s from its
    // send, here) had lapsed: read from the rows, not guessed from the kill's time, which a loaded
    // machine moves.
    const fromFirst = new Set(receiver.arrivals.filter((a) => a.pid === first.pid).map((a) => a.id));
    const resent = receiver.arrivals.filter((a) => a.pid === second.pid && fromFirst.has(a.id));
    expect(resent.length).toBeGreaterThan(0);
    expect(resent.length).toBeGreaterThanOrEqual(inflightAtKill);
    const early = resent.filter((a) => {
      const row = rows.get(a.id);
      if (!row) return true;
      return row.until > 0 ? a.at < row.until : row.attempts === 0 || a.at < row.runAt;
    });
    expect(early, "re-sends before the dead process's lease, or before a failed send's retry").toEqual([]);
    // Each effect was applied once even so (the receiver dedupes on webhook-id).
    const arrivalsPerId = new Map<string, number>();
    for (const a of receiver.arrivals) arrivalsPerId.set(a.id, (arrivalsPerId.get(a.id) ?? 0) + 1);
    expect([...arrivalsPerId.values()].some((n) => n > 1)).toBe(true);
    expect(second.named("delivery.dropped")).toEqual([]);
    // Past the sum of its waits: two spawns, 10 s for the kill's moment, 30 s for the rest.
  }, 120_000);
});
