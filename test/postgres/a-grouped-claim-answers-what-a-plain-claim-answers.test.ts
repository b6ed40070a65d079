import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { postgresMigrations } from "../../src/store/migrations/postgres.js";
import { claimedColumns } from "../../src/queue/store/rows.js";
import type { Job } from "../../src/queue/job.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

const words = (sql: string) => sql.replace(/\s+/g, " ").trim();

/**
 * A grouped claim on PostgreSQL (`tickwork_claim_grouped`) answers each job with the plain claim's
 * columns, folded the same way, so a handler sees the same job whichever claim started it: its
 * history, its attempt, and the lease the claim wrote.
 */
describe("PostgreSQL: a grouped claim answers what a plain claim answers", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("the newest grouped claim returns the plain claim's columns", () => {
    const latest = postgresMigrations.filter((m) => m.sql.includes("FUNCTION tickwork_claim_grouped")).at(-1)!;
    expect(words(latest.sql)).toContain(`RETURNING ${words(claimedColumns("postgres", "j."))}`);
  });

  it("hands a grouped job's handler its history, attempt and lease, as a plain queue's handler gets them", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" });
    const seen: { queue: string; attempt: number; history: string[]; lease: Job["lease"] }[] = [];
    const handler = (job: Job<{ n: number }>) => {
      seen.push({ queue: job.queue, attempt: job.attempts, history: job.history.map((a) => a.outcome), lease: job.lease });
      if (job.attempts === 1) throw new Error("first attempt fails");
    };
    const options = { concurrency: 2, retry: { maxAttempts: 2, backoff: () => 0 }, handler };
    const grouped = tw.queue<{ n: number }>("grouped", { ...options, groupConcurrency: 1, group: (p) => `g${p.n}` });
    const plain = tw.queue<{ n: number }>("plain", options);
    await grouped.enqueue({ n: 1 });
    await plain.enqueue({ n: 1 });
    const before = Date.now();
    await tw.start();
    await eventually(async () => (await tw.jobs.counts()).every((q) => q.counts.succeeded === 1), "both jobs to succeed on their second attempt", 20_000);

    for (const queue of ["grouped", "plain"]) {
      const attempts = seen.filter((s) => s.queue === queue);
      expect(attempts.map((s) => s.attempt)).toEqual([1, 2]);
      expect(attempts.map((s) => s.history)).toEqual([["running"], ["failed", "running"]]);
      for (const { lease } of attempts) {
        expect(lease?.workerId).toBe(`${tw.instanceId}/${queue}`);
        expect(lease!.until).toBeGreaterThan(before);
      }
    }
  });
});
