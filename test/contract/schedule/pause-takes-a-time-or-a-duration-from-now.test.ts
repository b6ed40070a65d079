import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { sqliteMemoryCase } from "../../support/stores.js";
import { HOUR, MINUTE, T0, engineFor } from "../../support/queue-fixtures.js";

describe("pauseUntil and backfill read their times", () => {
  const engine = engineFor(sqliteMemoryCase());

  it('pauseUntil("1h") pauses for an hour from now, not until 01:00 on 1 January 1970', async () => {
    const { tw, clock } = await engine();
    const ran: number[] = [];
    tw.task("prices", { every: "5m", run: (ctx) => void ran.push(ctx.scheduledAt) });
    await clock.set(T0 + 10 * MINUTE);
    await tw.scheduler.pauseUntil("1h");
    expect((await tw.scheduler.status()).pausedUntil).toBe(T0 + 10 * MINUTE + HOUR);
    await clock.set(T0 + 15 * MINUTE);
    expect(await tw.tick()).toMatchObject({ nextWakeAt: T0 + 10 * MINUTE + HOUR });
    expect(ran).toEqual([]);
  });

  it("backfill refuses a duration string where it needs an absolute time", async () => {
    const { tw } = await engine();
    tw.task("prices", { every: "5m", run: () => {} });
    const error = await tw.scheduler.backfill("prices", "1h" as unknown as number, T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe('backfill: from: expected a Date or epoch milliseconds, got "1h"');
  });
});
