import { describe, expect, it } from "vitest";
import { QueueAnnouncer } from "../../src/queue/store/postgres/announcer.js";
import { deferred } from "../support/real-time.js";

/** An announcer whose sends wait for the test to let them return. */
function controlled() {
  const sent: string[] = [];
  const pending: { queue: string; finish(error?: Error): void }[] = [];
  const announcer = new QueueAnnouncer((queue) => {
    sent.push(queue);
    const send = deferred<void>();
    pending.push({ queue, finish: (error) => (error ? send.reject(error) : send.resolve()) });
    return send.promise;
  });
  /** Lets the oldest send return (or fail), then lets the announcer react. */
  const finishNext = async (error?: Error) => {
    pending.shift()!.finish(error);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { announcer, sent, pending, finishNext };
}

describe("QueueAnnouncer", () => {
  it("announces a quiet queue at once, and covers every commit made while one is out with exactly one more", async () => {
    const { announcer, sent, pending, finishNext } = controlled();
    announcer.announce("emails");
    expect(sent).toEqual(["emails"]);

    for (let i = 0; i < 5; i++) announcer.announce("emails");
    expect(sent).toEqual(["emails"]);

    await finishNext();
    expect(sent).toEqual(["emails", "emails"]);
    await finishNext();
    expect(sent).toHaveLength(2);
    expect(pending).toHaveLength(0);

    announcer.announce("emails");
    expect(sent).toHaveLength(3);
  });

  it("keeps queues apart: one queue's announcement out never holds back another's", () => {
    const { announcer, sent } = controlled();
    announcer.announce("emails");
    announcer.announce("invoices");
    announcer.announce("emails");
    expect(sent).toEqual(["emails", "invoices"]);
  });

  it("swallows a failed send and still sends the one it owes, and the next", async () => {
    const { announcer, sent, finishNext } = controlled();
    announcer.announce("emails");
    announcer.announce("emails");
    await finishNext(new Error("connection lost"));
    expect(sent).toEqual(["emails", "emails"]);
    await finishNext();
    announcer.announce("emails");
    expect(sent).toHaveLength(3);
  });
});
