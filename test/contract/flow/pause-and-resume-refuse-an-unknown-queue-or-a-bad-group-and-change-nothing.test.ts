import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { UnknownQueueError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("pause and resume refuse an unknown queue or a bad group, and change nothing ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("an undeclared queue: pause, resume and status reject with UnknownQueueError (TW_UNKNOWN_QUEUE) naming the declared ones", async () => {
    const { tw } = await engine();
    tw.queue("work", { group: true });

    for (const call of [() => tw.queues.pause("wrok"), () => tw.queues.resume("wrok"), () => tw.queues.status("wrok"), () => tw.queues.pause("wrok", { group: "a" })]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnknownQueueError);
      expect(error).toMatchObject({ code: "TW_UNKNOWN_QUEUE", queue: "wrok", message: expect.stringContaining("declared: work") });
    }
    expect(await tw.store.queue.pauses({})).toEqual([]);
  });

  const badGroups: [string, unknown, RegExp][] = [
    ["an empty group", "", /group must be a string of 1 to 255 characters/],
    ["a group of 256 characters", "g".repeat(256), /group must be a string of 1 to 255 characters/],
    ["a lone surrogate", "\uD800", /group/],
    ["a number", 7, /group must be a string/],
    ["null", null, /group must be a string/],
  ];
  for (const [what, group, message] of badGroups) {
    it(`${what} as the group: pause and resume reject with InvalidInputError naming the group; no pause is written`, async () => {
      const { tw } = await engine();
      tw.queue("work", { group: true });
      for (const call of [() => tw.queues.pause("work", { group: group as string }), () => tw.queues.resume("work", { group: group as string })]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as Error).message).toMatch(message);
      }
      expect(await tw.store.queue.pauses({})).toEqual([]);
      expect((await tw.queues.status("work"))[0]).toMatchObject({ paused: false, pausedGroups: [] });
    });
  }

  it("a group of a queue that is not grouped: InvalidInputError, as enqueue refuses one; no pause written", async () => {
    const { tw } = await engine();
    tw.queue("plain");
    await expect(tw.queues.pause("plain", { group: "a" })).rejects.toThrow(/group needs a grouped queue/);
    await expect(tw.queues.resume("plain", { group: "a" })).rejects.toThrow(InvalidInputError);
    expect(await tw.store.queue.pauses({})).toEqual([]);
  });

  it("an unknown option or options that are not an object: InvalidInputError, no pause written", async () => {
    const { tw } = await engine();
    tw.queue("work", { group: true });
    await expect(tw.queues.pause("work", { groop: "a" } as never)).rejects.toThrow(/unknown option "groop"/);
    await expect(tw.queues.pause("work", "a" as never)).rejects.toThrow(InvalidInputError);
    await expect(tw.queues.status(undefined, { groups: 1.5 })).rejects.toThrow(/groups must be an integer/);
    expect(await tw.store.queue.pauses({})).toEqual([]);
  });
});
