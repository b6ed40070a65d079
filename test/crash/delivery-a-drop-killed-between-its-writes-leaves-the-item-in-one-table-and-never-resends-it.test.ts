import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FixtureProcess, spawnFixture } from "./fixtures/child-process.js";
import type { DropperConfig } from "./fixtures/delivery-dropper.js";
import { newTarget, openCrashDb, type Target } from "./fixtures/target.js";

/**
 * Dropping a delivery item writes twice: the item into the dead-letter table, then out of the
 * outbox. A real process whose every send fails (and whose retry policy drops at the first failure)
 * is SIGKILLed between those two writes; a second process then runs the delivery on. The item is in
 * exactly one of the two tables after the kill, and an item that was dropped is never sent again:
 * not by the second process, not an hour later. (With the two writes in separate statements, the
 * kill left the item in both tables and the second process sent the dropped item once more.)
 */
const DROPPER = fileURLToPath(new URL("./fixtures/delivery-dropper.ts", import.meta.url));
const NOW = Date.parse("2026-01-01T00:00:00Z");
const ITEMS = 2;

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`a delivery process killed between a drop's two writes (${kind})`, () => {
    const undo: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const step of undo.splice(0).reverse()) await step();
    });

    it("leaves each item in the outbox or the dead-letter table, never both, and never sends a dropped item again", async () => {
      const { target, cleanup } = newTarget(kind);
      undo.push(cleanup);
      const spawn = (label: string, config: Omit<DropperConfig, "target">) => {
        const child = new FixtureProcess(spawnFixture(DROPPER, { target, ...config } satisfies DropperConfig), label, 20_000);
        undo.push(() => child.kill());
        return child;
      };

      const first = spawn("dropper 1", { now: NOW, emit: ITEMS, killBeforeDelete: true });
      expect(await first.exited, `ended by its own SIGKILL, not by an exit\nstderr:\n${first.stderr}`).toBeNull();
      const sentByFirst = first.named("fixture.sent").map((l) => l.id as string);
      expect(new Set(sentByFirst).size, "both items were sent and failed before the kill").toBe(ITEMS);
      expect(first.named("delivery.dropped")).toEqual([]);

      const after = await tables(target);
      for (const id of sentByFirst) {
        expect(Number(after.outbox.includes(id)) + Number(after.dead.includes(id)), `item ${id}: in the outbox ${after.outbox.includes(id)}, dead-lettered ${after.dead.includes(id)}`).toBe(1);
      }

      // Well past the first process's lease: its items are due again.
      const second = spawn("dropper 2", { now: NOW + 3_600_000, emit: 0, killBeforeDelete: false });
      const done = await second.waitFor((l) => l.event === "fixture.done", "fixture.done", 20_000);
      expect(done).toMatchObject({ pending: 0, retrying: 0, dropped: ITEMS });
      const sentBySecond = second.named("fixture.sent").map((l) => l.id as string);
      // An item dropped before the kill stays dropped; one whose drop the kill undid is sent once more, once.
      expect(sentBySecond.filter((id) => after.dead.includes(id))).toEqual([]);
      expect([...sentBySecond].sort()).toEqual([...after.outbox].sort());
      expect(second.named("delivery.dropped").map((l) => l.id).sort()).toEqual([...after.outbox].sort());

      const end = await tables(target);
      expect(end.outbox).toEqual([]);
      expect([...end.dead].sort()).toEqual([...sentByFirst].sort());
    }, 40_000);
  });
}

/** The ids in the outbox and in the dead-letter table, read through a connection of the test's own. */
async function tables(target: Target): Promise<{ outbox: string[]; dead: string[] }> {
  const db = openCrashDb(target);
  try {
    const ids = async (table: string) => (await db.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id);
    return { outbox: await ids("tickwork_deliveries"), dead: await ids("tickwork_delivery_dead") };
  } finally {
    await db.close();
  }
}
