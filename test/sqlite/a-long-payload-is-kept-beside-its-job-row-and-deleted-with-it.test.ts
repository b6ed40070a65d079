import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork } from "../../src/index.js";
import { INLINE_PAYLOAD_MAX } from "../../src/queue/store/payloads.js";
import { sqlite } from "../../src/store/sqlite.js";
import { fakeClock } from "../../src/testing/index.js";
import type { Tickwork } from "../../src/tickwork.js";

/**
 * SQLite rewrites a whole row on every UPDATE, so a long payload lives in tickwork_job_payloads and
 * the job's row keeps '' in its place: what a claim and an outcome rewrite stays small. These checks
 * read the file itself, beside the engine: where each payload is, and that none outlives its job.
 */

const T0 = Date.parse("2026-01-01T00:00:00Z");
const dirs: string[] = [];
const engines: Tickwork[] = [];

afterEach(async () => {
  for (const tw of engines.splice(0)) await tw.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-payloads-"));
  dirs.push(dir);
  return join(dir, "tickwork.db");
}

async function engineOn(path: string, options: Omit<Parameters<typeof createTickwork>[0], "store"> = {}) {
  const clock = fakeClock(T0);
  const tw = await createTickwork({ ...options, store: sqlite(path), clock, handleSignals: false, logger: () => {} });
  engines.push(tw);
  return { tw, clock };
}

/** Where each job's payload is: "row" or "beside", and how many payloads sit beside the jobs table. */
function layout(path: string): { where: Record<string, "row" | "beside">; beside: number } {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare(`SELECT id, payload FROM tickwork_jobs`).all() as { id: number; payload: string }[];
    const beside = (db.prepare(`SELECT count(*) AS n FROM tickwork_job_payloads`).get() as { n: number }).n;
    return { where: Object.fromEntries(rows.map((r) => [String(r.id), r.payload === "" ? "beside" : "row"])), beside };
  } finally {
    db.close();
  }
}

const text = (n: number) => ({ text: "x".repeat(n) });
/** JSON.stringify(text(n)) is n + 11 characters long. */
const LONGEST_INLINE = INLINE_PAYLOAD_MAX - 11;

describe("a long payload on SQLite is kept beside its job's row, and deleted with it", () => {
  it("a payload up to the limit stays in the row, a longer one moves beside it, and a claim and an outcome leave both where they are", async () => {
    const path = file();
    const { tw } = await engineOn(path, { retention: { succeeded: false } });
    const seen: unknown[] = [];
    const q = tw.queue<{ text: string }>("docs", { handler: (job) => void seen.push(job.payload) });
    const short = await q.enqueue(text(LONGEST_INLINE));
    const long = await q.enqueue(text(LONGEST_INLINE + 1));
    expect(JSON.stringify(short.payload)).toHaveLength(INLINE_PAYLOAD_MAX);
    expect(layout(path)).toEqual({ where: { [short.id]: "row", [long.id]: "beside" }, beside: 1 });

    while ((await tw.tick()).ran > 0);
    expect(seen).toEqual([text(LONGEST_INLINE), text(LONGEST_INLINE + 1)]);
    expect(layout(path)).toEqual({ where: { [short.id]: "row", [long.id]: "beside" }, beside: 1 });
  });

  it("deleting or pruning a job deletes its payload, and a replace that shrinks a payload takes it back into the row", async () => {
    const path = file();
    const { tw, clock } = await engineOn(path, { retention: { succeeded: "1h" } });
    const q = tw.queue<{ text: string }>("docs", { handler: () => {} });
    const [a, b, c] = await q.enqueueMany([{ payload: text(2_000) }, { payload: text(3_000) }, { payload: text(10) }]);
    const keyed = await q.enqueue(text(4_000), { key: "k", delay: "1h" });
    expect(layout(path).beside).toBe(3);

    await q.enqueue(text(5), { key: "k", dedupe: "replace", delay: "1h" });
    expect(layout(path)).toMatchObject({ where: { [keyed.id]: "row" }, beside: 2 });
    expect((await tw.jobs.get(keyed.id))!.payload).toEqual(text(5));

    while ((await tw.tick()).ran > 0);
    await tw.jobs.delete(a!.id);
    expect(layout(path)).toEqual({ where: { [b!.id]: "beside", [c!.id]: "row", [keyed.id]: "row" }, beside: 1 });

    await clock.advance("2h");
    await tw.tick(); // its upkeep prunes what retention no longer keeps
    expect(layout(path).where[b!.id]).toBeUndefined();
    expect(layout(path).beside).toBe(0);
  });

});
