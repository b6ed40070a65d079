import { describe, expect, it } from "vitest";
import { createTickwork, type Tickwork, type TickworkOptions } from "../../src/tickwork.js";
import { InvalidInputError } from "../../src/core/errors.js";
import { UnknownQueueError } from "../../src/queue/errors.js";
import type { EnqueueOptions } from "../../src/queue/options.js";
import { sqlite } from "../../src/store/sqlite.js";

async function rejection(attempt: () => Promise<unknown> | unknown): Promise<Error> {
  try {
    await attempt();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

async function withEngine(run: (tw: Tickwork) => Promise<void>): Promise<void> {
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {} });
  try {
    await run(tw);
  } finally {
    await tw.stop();
  }
}

describe("createTickwork options", () => {
  it("refuses a bad pollInterval, naming the field and the value", async () => {
    const store = sqlite(":memory:");
    try {
      const error = await rejection(() => createTickwork({ store, logger: () => {}, pollInterval: "soon" }));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).code).toBe("TW_INVALID_INPUT");
      expect(error.message).toMatch(/^createTickwork: pollInterval: invalid duration "soon": .*\(got "soon"\)$/);
    } finally {
      await store.close();
    }
  });

  it.each([
    [{ rescueInterval: -1 }, /^createTickwork: rescueInterval: invalid duration -1: .*\(got -1\)$/],
    [{ logLevel: "verbose" }, /^createTickwork: logLevel: .*\(got "verbose"\)$/],
    [{ retention: { succeeded: "a week" } }, /^createTickwork: retention\.succeeded: .*\(got "a week"\)$/],
    [{ instanceId: "" }, /^createTickwork: instanceId: .*\(got ""\)$/],
  ])("refuses %j, naming the field and the value", async (bad, message) => {
    const store = sqlite(":memory:");
    try {
      const error = await rejection(() => createTickwork({ store, logger: () => {}, ...bad } as TickworkOptions));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(message);
    } finally {
      await store.close();
    }
  });

  it("refuses an unknown option key, naming it", async () => {
    const store = sqlite(":memory:");
    try {
      const error = await rejection(() => createTickwork({ store, logger: () => {}, pollIntervall: "1s" } as TickworkOptions));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe('createTickwork: Unrecognized key: "pollIntervall"');
    } finally {
      await store.close();
    }
  });

  it("refuses a missing or wrong store, saying what a store is", async () => {
    for (const options of [{}, { store: "./tickwork.db" }, undefined]) {
      const error = await rejection(() => createTickwork(options as unknown as TickworkOptions));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(/^createTickwork: store: expected a store: sqlite\(path\) or postgres\(url\) \(got (undefined|"\.\/tickwork\.db")\)$/);
    }
  });

  it("refuses a logger that is none of the accepted kinds", async () => {
    const store = sqlite(":memory:");
    try {
      const error = await rejection(() => createTickwork({ store, logger: 42 as never }));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(/^logger must be a function .*, got 42$/);
    } finally {
      await store.close();
    }
  });
});

describe("tw.queue options", () => {
  it.each([
    [{ concurrency: 0 }, /^queue "emails": concurrency: .*>=1 \(got 0\)$/],
    [{ concurrency: 1.5 }, /^queue "emails": concurrency: .*\(got 1\.5\)$/],
    [{ lease: "abc" }, /^queue "emails": lease: invalid duration "abc": .*\(got "abc"\)$/],
    [{ lease: "10ms" }, /^queue "emails": lease: the lease must be at least 1s \(got "10ms"\)$/],
    [{ timeout: "later" }, /^queue "emails": timeout: invalid duration "later".*\(got "later"\)$/],
    [{ retry: { maxAttempts: 0 } }, /^queue "emails": retry\.maxAttempts: .*\(got 0\)$/],
    [{ retry: { backoff: "1m" } }, /^queue "emails": retry\.backoff: expected exponential\(\.\.\.\), schedule\(\[\.\.\.\]\) or a function .*\(got "1m"\)$/],
    [{ handler: "send" }, /^queue "emails": handler: expected a handler .*\(got "send"\)$/],
  ])("refuses %j, naming the field and the value", async (options, message) => {
    await withEngine(async (tw) => {
      const error = await rejection(() => tw.queue("emails", options as never));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(message);
      // The queue was not declared: the name is still free.
      expect(() => tw.queue("emails")).not.toThrow();
    });
  });

  it("refuses an unknown option key, naming it", async () => {
    await withEngine(async (tw) => {
      const error = await rejection(() => tw.queue("emails", { concurency: 4 } as never));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe('queue "emails": Unrecognized key: "concurency"');
    });
  });

  it.each([
    ["", '""'],
    ["has space", '"has space"'],
    ["-leading-dash", '"-leading-dash"'],
    ["emails/eu", '"emails/eu"'],
    ["x".repeat(129), JSON.stringify("x".repeat(129))],
    [42, "42"],
  ])("refuses the queue name %j, naming it", async (name, shown) => {
    await withEngine(async (tw) => {
      const error = await rejection(() => tw.queue(name as never));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe(`queue name ${shown} is invalid: use 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);
    });
  });

  it("accepts names of letters, digits, _ . : and - up to 128 characters", async () => {
    await withEngine(async (tw) => {
      for (const name of ["emails", "E2", "billing.invoices:eu-west_1", "x".repeat(128)]) expect(tw.queue(name).name).toBe(name);
    });
  });

  it("refuses a second declaration of the same queue with options, naming it and saying how to get the first", async () => {
    await withEngine(async (tw) => {
      tw.queue("emails");
      for (const options of [{ concurrency: 2 }, {}]) {
        const error = await rejection(() => tw.queue("emails", options));
        expect(error).toBeInstanceOf(InvalidInputError);
        expect(error.message).toBe('queue "emails" is already declared: keep the Queue its declaration returned, or get it again with tw.queue("emails") and no options');
      }
    });
  });

  it("gives a declared queue back for its name alone: the same handle, its declaration unchanged", async () => {
    await withEngine(async (tw) => {
      const ran: unknown[] = [];
      const declared = tw.queue<{ to: string }>("emails", { concurrency: 3, handler: (job) => void ran.push(job.payload) });
      const found = tw.queue<{ to: string }>("emails");
      expect(found).toBe(declared);
      await found.enqueue({ to: "ada@example.com" });
      expect((await tw.tick()).ran).toBe(1);
      expect(ran).toEqual([{ to: "ada@example.com" }]);
    });
  });
});

describe("enqueue options", () => {
  it.each<[string, EnqueueOptions, RegExp]>([
    ["a negative delay", { delay: -5 }, /^queue "emails".enqueue: delay must not be negative, got -5$/],
    ["a negative delay string", { delay: "-1s" }, /^queue "emails".enqueue: delay: invalid duration "-1s"/],
    ["a malformed delay", { delay: "soon" }, /^queue "emails".enqueue: delay: invalid duration "soon"/],
    ["both runAt and delay", { runAt: new Date(0), delay: "1m" }, /^queue "emails".enqueue: give runAt or delay, not both$/],
    ["an invalid runAt", { runAt: new Date("nope") }, /^queue "emails".enqueue: runAt must be a Date or epoch milliseconds/],
    ["a non-integer priority", { priority: 1.5 }, /^queue "emails".enqueue: priority must be an integer from -2147483647 to 2147483647, got 1\.5$/],
    ["a priority beyond 32 bits", { priority: 2 ** 31 }, /^queue "emails".enqueue: priority must be an integer from -2147483647 to 2147483647, got 2147483648$/],
    ["a key of 256 characters", { key: "k".repeat(256) }, /^queue "emails".enqueue: key must be a string of 1 to 255 characters, got a string of 256 characters starting "k{80}"$/],
    ["an empty key", { key: "" }, /^queue "emails".enqueue: key must be a string of 1 to 255 characters, got ""$/],
    ["maxAttempts 0", { maxAttempts: 0 }, /^queue "emails".enqueue: maxAttempts must be an integer from 1 to 2147483647, got 0$/],
    // A typo must not enqueue a job that runs at once instead of in five minutes.
    ["an unknown option (a typo)", { dealy: "5m" } as EnqueueOptions, /^queue "emails".enqueue: unknown option "dealy"/],
  ])("refuses %s with a clear InvalidInputError and writes nothing", async (_what, options, message) => {
    await withEngine(async (tw) => {
      const queue = tw.queue("emails");
      const error = await rejection(() => queue.enqueue({ to: "a@example.com" }, options));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(message);
      expect(await tw.jobs.list()).toEqual([]);
      expect(await tw.jobs.counts()).toEqual([]);
    });
  });

  it("accepts a key of exactly 255 characters", async () => {
    await withEngine(async (tw) => {
      const job = await tw.queue("emails").enqueue({}, { key: "k".repeat(255) });
      expect(job.key).toBe("k".repeat(255));
    });
  });
});

describe("unknown queues and bad ids", () => {
  it("tw.enqueue and tw.jobs.list on an undeclared queue throw UnknownQueueError, naming it and the declared ones", async () => {
    await withEngine(async (tw) => {
      tw.queue("emails");
      for (const attempt of [() => tw.enqueue("nope", {}), () => tw.jobs.list({ queue: "nope" }), () => tw.jobs.counts("nope")]) {
        const error = await rejection(attempt);
        expect(error).toBeInstanceOf(UnknownQueueError);
        expect((error as UnknownQueueError).code).toBe("TW_UNKNOWN_QUEUE");
        expect(error.message).toBe('unknown queue "nope": declare it with tw.queue("nope", ...) first (declared: emails)');
      }
      expect(await tw.jobs.list()).toEqual([]);
    });
  });

  it("says so when no queue is declared at all", async () => {
    await withEngine(async (tw) => {
      await expect(tw.enqueue("nope", {})).rejects.toThrow('unknown queue "nope": declare it with tw.queue("nope", ...) first (no queue is declared)');
    });
  });

  it.each([["abc"], ["0"], ["-1"], ["1.5"], [""], [42]])("tw.jobs.get(%j) throws InvalidInputError: ids are digit strings", async (id) => {
    await withEngine(async (tw) => {
      const error = await rejection(() => tw.jobs.get(id as never));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe(`jobs.get: id must be an id: a string of digits from "1" to "9223372036854775807", got ${JSON.stringify(id)}`);
    });
  });

  it("an unknown but well-formed id is simply not found", async () => {
    await withEngine(async (tw) => {
      expect(await tw.jobs.get("12345")).toBeNull();
    });
  });
});
