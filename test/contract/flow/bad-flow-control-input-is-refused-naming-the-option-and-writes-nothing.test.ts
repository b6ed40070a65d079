import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import type { QueueOptions } from "../../../src/queue/options.js";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

const badQueues: [string, Record<string, unknown>, RegExp][] = [
  ["globalConcurrency 0", { globalConcurrency: 0 }, /globalConcurrency/],
  ["globalConcurrency 1.5", { globalConcurrency: 1.5 }, /globalConcurrency/],
  ['globalConcurrency "x"', { globalConcurrency: "x" }, /globalConcurrency/],
  ["groupConcurrency -1", { groupConcurrency: -1 }, /groupConcurrency/],
  ["rateLimit { max: 0 }", { rateLimit: { max: 0, per: "1s", scope: "global" } }, /rateLimit\.max/],
  ['rateLimit { per: "soon" }', { rateLimit: { max: 5, per: "soon", scope: "global" } }, /rateLimit\.per/],
  ["rateLimit { burst > max }", { rateLimit: { max: 5, per: "1s", scope: "global", burst: 6 } }, /rateLimit\.burst: burst must be at most max/],
  ['rateLimit { burst, scope: "process" }', { rateLimit: { max: 5, per: "1s", scope: "process", burst: 2 } }, /rateLimit\.burst: burst needs scope: "global"/],
  ['rateLimit { scope: "everywhere" }', { rateLimit: { max: 5, per: "1s", scope: "everywhere" } }, /rateLimit\.scope/],
  ["groupRateLimit { max: 0 }", { groupRateLimit: { max: 0, per: "1s" } }, /groupRateLimit\.max/],
  ["groupRateLimit { burst > max }", { groupRateLimit: { max: 2, per: "1s", burst: 3 } }, /groupRateLimit\.burst/],
  ["groupWeights without groups", { groupWeights: { a: 2 } }, /groupWeights needs a grouped queue/],
  ["groupWeights not a record", { group: true, groupWeights: 3 }, /groupWeights/],
  ["a weight of 0", { group: true, groupWeights: { a: 0 } }, /groupWeights\.a/],
  ["a weight over 100", { group: true, groupWeights: { a: 101 } }, /groupWeights\.a/],
  ['group "yes"', { group: "yes" }, /group/],
  ["limiter not a limiter", { limiter: { max: 1, per: "1s" } }, /limiter/],
];

describe.each(allStoreCases())("bad flow-control input is refused, naming the option, and writes nothing ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  for (const [what, options, names] of badQueues) {
    it(`a queue declared with ${what}: InvalidInputError naming it; nothing is declared or written`, async () => {
      const { tw } = await engine();
      expect(() => tw.queue("work", options as QueueOptions)).toThrow(InvalidInputError);
      expect(() => tw.queue("work", options as QueueOptions)).toThrow(names);
      expect(tw.status().queues).toEqual([]);
      expect(await tw.jobs.list({})).toEqual([]);
      expect(await tw.store.queue.bucketStates({ buckets: ["queue:work"] })).toEqual({});
    });
  }

  const badGroups: [string, { group?: unknown; tenant?: unknown }, RegExp][] = [
    ['group ""', { group: "" }, /group must be a string of 1 to 255 characters/],
    ["a group of 256 characters", { group: "g".repeat(256) }, /group must be a string of 1 to 255 characters/],
    ['a lone surrogate "\\uD800"', { group: "\uD800" }, /group .*(Unicode|surrogate)/i],
    ["a group that is a number", { group: 42 }, /group must be a string/],
    ["group(payload) giving a number", { tenant: 42 }, /group \(from the queue's group\(payload\)\) must be a string/],
    ["group(payload) giving a lone surrogate", { tenant: "\uDFFF" }, /group \(from the queue's group\(payload\)\)/],
    ["group(payload) giving 256 characters", { tenant: "t".repeat(256) }, /group \(from the queue's group\(payload\)\) must be a string of 1 to 255/],
    ["group(payload) throwing", { tenant: "boom" }, /the queue's group\(payload\) threw: no tenant/],
  ];
  for (const [what, given, message] of badGroups) {
    it(`${what}: enqueue rejects with InvalidInputError naming the group; enqueueMany with one good job writes neither`, async () => {
      const { tw } = await engine();
      const q = tw.queue<{ tenant?: unknown }>("work", {
        group: (p) => {
          if (p.tenant === "boom") throw new Error("no tenant");
          return p.tenant as string;
        },
      });
      const options = given.group !== undefined ? { group: given.group as string } : {};
      const payload = given.tenant !== undefined ? { tenant: given.tenant } : { tenant: "ok" };
      const error = await q.enqueue(payload, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(message);
      await expect(q.enqueueMany([{ payload: { tenant: "fine" } }, { payload, ...options }])).rejects.toThrow(message);
      expect(await tw.jobs.list({})).toEqual([]);
    });
  }

  const badLimiters: [string, () => [string, unknown], RegExp][] = [
    ['limiter name ""', () => ["", { max: 1, per: "1s" }], /limiter name "" is invalid/],
    ['limiter name "a b"', () => ["a b", { max: 1, per: "1s" }], /limiter name "a b" is invalid/],
    ["limiter { max: 0 }", () => ["api", { max: 0, per: "1s" }], /limiter "api": max/],
    ['limiter { per: "soon" }', () => ["api", { max: 1, per: "soon" }], /limiter "api": per/],
    ["limiter { burst > max }", () => ["api", { max: 2, per: "1s", burst: 3 }], /limiter "api": burst: burst must be at most max/],
  ];
  for (const [what, args, message] of badLimiters) {
    it(`${what}: InvalidInputError naming it; no limiter is defined`, async () => {
      const { tw } = await engine();
      const [name, options] = args();
      expect(() => tw.limiter(name, options as never)).toThrow(InvalidInputError);
      expect(() => tw.limiter(name, options as never)).toThrow(message);
      expect(tw.limiters()).toEqual([]);
      expect(await tw.jobs.list({})).toEqual([]);
    });
  }

  it("one name with other settings: InvalidInputError naming the limiter and both settings; the same settings give the same limiter", async () => {
    const { tw } = await engine();
    const api = tw.limiter("api", { max: 10, per: "1s" });
    expect(tw.limiter("api", { max: 10, per: 1000 })).toBe(api);
    expect(() => tw.limiter("api", { max: 10, per: "1m" })).toThrow(InvalidInputError);
    expect(() => tw.limiter("api", { max: 10, per: "1s", burst: 2 })).toThrow(/limiter "api" is already defined with .*"burst":1.*"burst":2/);
    expect(tw.limiters()).toEqual([api]);
  });

  it("acquire / tryAcquire of 0, 1.5 or more tokens than the burst are refused with InvalidInputError and take nothing", async () => {
    const { tw } = await engine();
    const api = tw.limiter("api", { max: 10, per: "1s", burst: 3 });
    for (const tokens of [0, -1, 1.5, 4, Number.NaN]) {
      await expect(api.acquire({ tokens })).rejects.toThrow(/tokens must be an integer from 1 to the limiter's burst \(3\)/);
      await expect(api.tryAcquire(tokens)).rejects.toThrow(InvalidInputError);
    }
    await expect(api.acquire("soon" as never)).rejects.toThrow(/options must be an object/);
    // Each option named, never a raw TypeError or a duration error that does not say which field.
    await expect(api.acquire({ signal: {} as never })).rejects.toThrow(/acquire: signal must be an AbortSignal, got \{\}/);
    await expect(api.acquire({ timeout: "soon" })).rejects.toThrow(/acquire: timeout must be a duration/);
    await expect(api.acquire({ timeout: -5 })).rejects.toThrow(/acquire: timeout must be a duration/);
    await expect(api.acquire({ tokens: 1, within: "1s" } as never)).rejects.toThrow(/acquire: unknown option "within"/);
    for (const bad of [{ signal: {} as never }, { timeout: "soon" }, { within: "1s" } as never]) await expect(api.acquire(bad)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(api.pause("soon")).rejects.toThrow(InvalidInputError);
    expect(await api.state()).toEqual({ name: "api", max: 10, perMs: 1000, burst: 3, tokens: 3, pausedUntil: null, nextTokenAt: T0 });
    expect(await tw.store.queue.bucketStates({ buckets: ["limiter:api"] })).toEqual({});
  });
});
