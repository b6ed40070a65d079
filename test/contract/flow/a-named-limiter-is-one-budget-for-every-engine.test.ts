import { describe, expect, it } from "vitest";
import { LimiterTimeoutError } from "../../../src/queue/errors.js";
import { sharedStoreCases, twoEnginesFor } from "./two-engines.js";
import { T0, until } from "../../support/queue-fixtures.js";

/** Settles `promise` into a value the test can look at without awaiting it. */
function watch<T>(promise: Promise<T>) {
  const seen: { done: boolean; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => Object.assign(seen, { done: true, value }),
    (error: unknown) => Object.assign(seen, { done: true, error }),
  );
  return seen;
}

describe.each(sharedStoreCases())("a named limiter is one budget for every engine on the store ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("{ max: 2, per: 1s }: a token A takes is gone for B until 500 ms later, and the other way round; state() shows it", async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 2, per: "1s" });
    const inB = b.tw.limiter("api", { max: 2, per: "1s" });

    expect(await inB.state()).toEqual({ name: "api", max: 2, perMs: 1000, burst: 1, tokens: 1, pausedUntil: null, nextTokenAt: T0 });
    expect(await inA.tryAcquire()).toBe(true);
    expect(await inB.tryAcquire()).toBe(false);
    expect(await inB.state()).toEqual({ name: "api", max: 2, perMs: 1000, burst: 1, tokens: 0, pausedUntil: null, nextTokenAt: T0 + 500 });
    await clock.advance("499ms");
    expect(await inB.tryAcquire()).toBe(false);
    await clock.advance("1ms");
    expect(await inB.tryAcquire()).toBe(true);
    expect(await inA.tryAcquire()).toBe(false);
    expect(await inA.state()).toMatchObject({ tokens: 0, nextTokenAt: T0 + 1000 });
  });

  it("burst 3: B takes 3 at once, then A finds none; tokens come back one per interval up to 3", async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 4, per: "1s", burst: 3 });
    const inB = b.tw.limiter("api", { max: 4, per: "1s", burst: 3 });

    expect(await inB.tryAcquire(3)).toBe(true);
    expect(await inA.tryAcquire()).toBe(false);
    expect(await inA.state()).toMatchObject({ burst: 3, tokens: 0, nextTokenAt: T0 + 250 });
    await clock.advance("500ms");
    expect(await inA.state()).toMatchObject({ tokens: 2 });
    await clock.advance("10s");
    expect(await inA.state()).toMatchObject({ tokens: 3, nextTokenAt: clock.now() });
  });

  it("acquire in B waits on the clock until the token A left is due, then takes it", async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 2, per: "1s" });
    const inB = b.tw.limiter("api", { max: 2, per: "1s" });
    await inA.acquire();

    const acquired: number[] = [];
    const waiting = watch(inB.acquire().then(() => acquired.push(clock.now())));
    await until(() => b.named("limiter.waiting").length === 1, "B's acquire to wait");
    expect(b.named("limiter.waiting")[0]).toMatchObject({ limiter: "api", until: T0 + 500 });
    await clock.advance("499ms");
    expect(waiting.done).toBe(false);
    await clock.advance("1ms");
    await until(() => waiting.done, "B's acquire to take the token");

    expect(waiting.error).toBeUndefined();
    expect(acquired).toEqual([T0 + 500]);
    expect(await inA.tryAcquire()).toBe(false);
  });

  it("acquire({ timeout }) shorter than the wait rejects with LimiterTimeoutError (TW_LIMITER_TIMEOUT); one long enough gets the token", async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 1, per: "1m" });
    const inB = b.tw.limiter("api", { max: 1, per: "1m" });
    await inA.acquire();

    const error = await inB.acquire({ timeout: "30s" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimiterTimeoutError);
    expect(error).toMatchObject({ code: "TW_LIMITER_TIMEOUT", limiter: "api" });
    expect(clock.now()).toBe(T0);

    const inTime = watch(inB.acquire({ timeout: "60s" }));
    await until(() => b.named("limiter.waiting").length === 1, "B's acquire to wait");
    await clock.advance("60s");
    await until(() => inTime.done, "B's acquire to take the token");
    expect(inTime.error).toBeUndefined();
  });

  it("acquire with an aborted signal rejects with its reason at once; aborting during the wait rejects with that reason", async () => {
    const { a, b } = await engines();
    const inA = a.tw.limiter("api", { max: 1, per: "1m" });
    const inB = b.tw.limiter("api", { max: 1, per: "1m" });

    const gone = new Error("caller gave up");
    await expect(inB.acquire({ signal: AbortSignal.abort(gone) })).rejects.toBe(gone);
    // Nothing was taken by the refused acquire.
    expect(await inA.state()).toMatchObject({ tokens: 1 });

    await inA.acquire();
    const controller = new AbortController();
    const waiting = watch(inB.acquire({ signal: controller.signal }));
    await until(() => b.named("limiter.waiting").length === 1, "B's acquire to wait");
    const late = new Error("request cancelled");
    controller.abort(late);
    await until(() => waiting.done, "B's acquire to end");
    expect(waiting.error).toBe(late);
  });

  it('pause("30s") in A holds B\'s tryAcquire until then, with state() showing it; resume in A ends a pause at once', async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 10, per: "1s" });
    const inB = b.tw.limiter("api", { max: 10, per: "1s" });

    await inA.pause("30s");
    expect(a.named("limiter.paused")).toEqual([expect.objectContaining({ limiter: "api", until: T0 + 30_000 })]);
    expect(await inB.tryAcquire()).toBe(false);
    expect(await inB.state()).toEqual({ name: "api", max: 10, perMs: 1000, burst: 1, tokens: 0, pausedUntil: T0 + 30_000, nextTokenAt: T0 + 30_000 });
    await clock.advance("29999ms");
    expect(await inB.tryAcquire()).toBe(false);
    await clock.advance("1ms");
    expect(await inB.tryAcquire()).toBe(true);
    expect(await inB.state()).toMatchObject({ pausedUntil: null });

    await clock.advance("100ms");
    await inA.pause(new Date(clock.now() + 3_600_000), "upstream asked");
    expect(await inB.tryAcquire()).toBe(false);
    await inA.resume();
    expect(await inB.tryAcquire()).toBe(true);
    expect(await inB.state()).toMatchObject({ pausedUntil: null });
  });

  it("a queue with limiter: its job starts in B draw from the budget A's direct acquire calls take", async () => {
    const { a, b, clock } = await engines();
    const inA = a.tw.limiter("api", { max: 2, per: "1s" });
    const started: number[] = [];
    const calls = b.tw.queue("calls", { concurrency: 5, limiter: b.tw.limiter("api", { max: 2, per: "1s" }), handler: () => void started.push(clock.now() - T0) });
    await calls.enqueueMany([{ payload: {} }, { payload: {} }]);

    await inA.acquire();
    expect(await b.tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 500 });
    const [status] = await b.tw.queues.status("calls");
    expect(status!.buckets).toEqual([{ bucket: "limiter:api", intervalMs: 500, burst: 1, tokens: 0, pausedUntil: null, nextTokenAt: T0 + 500 }]);
    await clock.advance("500ms");
    expect(await b.tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 1000 });
    // The job took the token: A's direct call now waits for the next one.
    expect(await inA.tryAcquire()).toBe(false);
    await clock.advance("500ms");
    expect(await inA.tryAcquire()).toBe(true);
    expect(await b.tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 1500 });
    expect(started).toEqual([500]);
  });
});
