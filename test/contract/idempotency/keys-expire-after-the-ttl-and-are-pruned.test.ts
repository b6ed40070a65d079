import { describe, expect, it } from "vitest";
import { fakeClock } from "../../../src/testing/fake-clock.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { DAY, HOUR, MINUTE, SECOND, T0, engineFor } from "../../support/queue-fixtures.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

/** Seed 002: keys expire after 24 hours and are deleted on initialisation (and here, periodically). */
describe.each(allStoreCases())("keys expire after the TTL ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const open = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };

  it("a key is remembered for 24 h by default; an older one is treated as new", async () => {
    const { tw, clock } = await engine();
    let runs = 0;
    const call = () => tw.idempotency.run(open, async () => ({ success: true, n: ++runs }));
    expect(await call()).toEqual({ success: true, n: 1 });

    await clock.advance(DAY - SECOND);
    expect(await call()).toEqual({ success: true, n: 1 });
    expect(runs).toBe(1);

    await clock.advance(2 * SECOND);
    expect(await call()).toEqual({ success: true, n: 2 });
    expect(await tw.idempotency.list("acct-1")).toMatchObject([{ status: "completed", createdAt: T0 + DAY + SECOND, result: JSON.stringify({ success: true, n: 2 }) }]);
    // The new run's key lives another TTL from now.
    await clock.advance(HOUR);
    expect(await call()).toEqual({ success: true, n: 2 });
  });

  it("the TTL is configurable", async () => {
    const { tw, clock } = await engine({ idempotency: { ttl: "1h" } });
    expect(tw.idempotency.ttlMs).toBe(HOUR);
    let runs = 0;
    const call = () => tw.idempotency.run(open, async () => ++runs);
    await call();
    await clock.advance(59 * MINUTE);
    expect(await call()).toBe(1);
    await clock.advance(MINUTE + SECOND);
    expect(await call()).toBe(2);
  });

  it("prune() deletes the keys older than the TTL, and the engine's periodic pruning does too", async () => {
    const { tw, clock, named } = await engine({ idempotency: { ttl: "1h" } });
    for (const key of ["a", "b", "c"]) await tw.idempotency.run({ ...open, key }, async () => key);
    await clock.advance(30 * MINUTE);
    await tw.idempotency.run({ ...open, key: "d" }, async () => "d");

    await clock.advance(30 * MINUTE + SECOND);
    expect(await tw.idempotency.prune()).toBe(3);
    expect((await tw.idempotency.list("acct-1")).map((r) => r.key)).toEqual(["d"]);
    expect(named("idempotency.pruned").at(-1)).toMatchObject({ count: 3, olderThanMs: HOUR });
    expect(await tw.idempotency.prune()).toBe(0);

    // tick() prunes with the finished jobs, once a minute.
    await clock.advance(30 * MINUTE);
    await tw.tick();
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    expect(named("idempotency.pruned").at(-1)).toMatchObject({ count: 1 });
  });

  it("prune() works through more keys than one batch", async () => {
    const { tw, clock } = await engine({ idempotency: { ttl: "1h" } });
    const keys = Array.from({ length: 1_050 }, (_, i) => `k-${i}`);
    // 50 at a time, and a longer timeout: 2,100 round trips to workerd take 15-20 s on a loaded 2-core machine.
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((key) => tw.idempotency.run({ ...open, key }, async () => undefined)));
    await clock.advance(HOUR + SECOND);
    expect(await tw.idempotency.prune()).toBe(keys.length);
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
  }, 120_000);
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("expired keys are pruned when an engine starts ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("createTickwork deletes the keys older than the TTL before the engine is used", async () => {
    const first = await engines.first();
    for (const key of ["a", "b"]) await first.tw.idempotency.run({ scope: "acct-1", key, operation: "OPEN_POSITION" }, async () => ({ success: true, key }));
    await first.clock.advance(12 * HOUR);
    await first.tw.idempotency.run({ scope: "acct-1", key: "c", operation: "OPEN_POSITION" }, async () => ({ success: true, key: "c" }));
    await first.tw.stop();

    // Restarted 24 h and a second after the first keys: they are gone, the later one is kept.
    const second = await engines.another({ clock: fakeClock(T0 + DAY + SECOND) });
    expect(second.named("idempotency.pruned")).toMatchObject([{ count: 2, olderThanMs: DAY }]);
    expect((await second.tw.idempotency.list("acct-1")).map((r) => r.key)).toEqual(["c"]);
  });
});
