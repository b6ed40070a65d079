import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/core/logger.js";
import { Throughput } from "../../src/server/throughput.js";

const event = (name: string, queue: string, time: number): LogEvent => ({ event: name, level: "info", time, queue });

describe("Throughput", () => {
  it("counts succeeded, retried and failed attempts per queue in buckets, the current one last, and the failed ones apart", () => {
    const t = new Throughput(1_000, 5);
    t.observe(event("job.succeeded", "mail", 10_100));
    t.observe(event("job.retry_scheduled", "mail", 10_900));
    t.observe(event("job.failed", "mail", 12_000));
    t.observe(event("job.succeeded", "sms", 14_999));
    t.observe(event("job.enqueued", "mail", 14_000));
    t.observe(event("job.started", "mail", 14_000));

    expect(t.snapshot(14_500)).toEqual({
      bucketMs: 1_000,
      start: 10_000,
      queues: { mail: [2, 0, 1, 0, 0], sms: [0, 0, 0, 0, 1] },
      // A retry scheduled and a failure for good are failed attempts; a success is not.
      failed: { mail: [1, 0, 1, 0, 0], sms: [0, 0, 0, 0, 0] },
    });
  });

  it("forgets buckets older than the window, even when a queue has been quiet since", () => {
    const t = new Throughput(1_000, 3);
    t.observe(event("job.failed", "mail", 1_000));
    t.observe(event("job.succeeded", "mail", 2_000));
    expect(t.snapshot(3_000).queues.mail).toEqual([1, 1, 0]);
    expect(t.snapshot(3_000).failed.mail).toEqual([1, 0, 0]);
    // Bucket 4's ring slot is bucket 1's: the old counts are replaced, not added to.
    t.observe(event("job.succeeded", "mail", 4_000));
    expect(t.snapshot(4_000).queues.mail).toEqual([1, 0, 1]);
    expect(t.snapshot(4_000).failed.mail).toEqual([0, 0, 0]);
    expect(t.snapshot(60_000).queues.mail).toEqual([0, 0, 0]);
  });
});
