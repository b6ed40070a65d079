/**
 * The verdict must catch what it is there to catch: these ledgers break each rule once and check
 * that the break is reported, and that the documented cases are not.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readLedgers, type LedgerRecord } from "../ledger.js";
import { flowFailures, judgeFlows, type FlowFinal } from "./flows.js";
import { judgeJobs } from "./jobs.js";
import { judgeKeys } from "./keys.js";
import { judgeSlots } from "./slots.js";

const rec = (k: string, t: number, pid: number, fields: Record<string, unknown> = {}): LedgerRecord => ({ k, t, pid, ...fields });
const bounds = { leaseMs: 2_000, rescueMs: 500 };

describe("the jobs verdict", () => {
  const ack = rec("ack", 0, 9, { ids: ["1"] });

  it("explains a re-run after the worker was killed, and times the recovery from the kill", () => {
    const v = judgeJobs(
      [ack, rec("start", 10, 1, { job: "1", attempt: 1 }), rec("fault.kill", 20, 100, { target: 1, at: 20, dead: 25 }), rec("start", 2_600, 2, { job: "1", attempt: 2 }), rec("done", 2_650, 2, { job: "1", attempt: 2 })],
      [{ id: "1", status: "succeeded", attempts: 2 }],
      bounds,
    );
    expect(v.lost).toEqual([]);
    expect(v.unexplained).toEqual([]);
    expect(v.explained).toEqual({ killed: 1 });
    expect(v.recovery.find((r) => r.label === "kill → re-run")?.ms).toEqual([2_580]);
  });

  it("reports a re-run whose first worker was neither killed, frozen, fenced nor failing", () => {
    const v = judgeJobs(
      [ack, rec("start", 10, 1, { job: "1", attempt: 1 }), rec("done", 20, 1, { job: "1", attempt: 1 }), rec("start", 3_000, 2, { job: "1", attempt: 2 }), rec("done", 3_010, 2, { job: "1", attempt: 2 })],
      [{ id: "1", status: "succeeded", attempts: 2 }],
      bounds,
    );
    expect(v.unexplained).toHaveLength(1);
    expect(v.doubleCompletions).toBe(1);
  });

  it("reports one attempt executed twice (unless its first process was killed before its start was written), and an accepted attempt older than a started one", () => {
    const twice = judgeJobs(
      [ack, rec("start", 10, 1, { job: "1", attempt: 1 }), rec("start", 30, 2, { job: "1", attempt: 1 }), rec("done", 40, 2, { job: "1", attempt: 1 })],
      [{ id: "1", status: "succeeded", attempts: 1 }],
      bounds,
    );
    expect(twice.unexplained.join()).toMatch(/executed twice/);
    const givenBack = judgeJobs(
      [ack, rec("start", 10, 1, { job: "1", attempt: 1 }), rec("fault.kill", 20, 100, { target: 1 }), rec("start", 30, 2, { job: "1", attempt: 1 }), rec("done", 40, 2, { job: "1", attempt: 1 })],
      [{ id: "1", status: "succeeded", attempts: 1 }],
      bounds,
    );
    expect(givenBack.unexplained).toEqual([]);
    const stale = judgeJobs(
      [ack, rec("start", 10, 1, { job: "1", attempt: 1 }), rec("done", 20, 1, { job: "1", attempt: 1 }), rec("start", 30, 2, { job: "1", attempt: 2 })],
      [{ id: "1", status: "succeeded", attempts: 1 }],
      bounds,
    );
    expect(stale.unexplained.join()).toMatch(/accepted after a later claim/);
  });

  it("counts as lost a job that did not succeed, one missing from the table, and a success without a completed execution", () => {
    const v = judgeJobs(
      [rec("ack", 0, 9, { ids: ["1", "2", "3"] }), rec("start", 10, 1, { job: "1", attempt: 1 }), rec("start", 10, 1, { job: "3", attempt: 1 })],
      [
        { id: "1", status: "succeeded", attempts: 1 },
        { id: "3", status: "pending", attempts: 1 },
      ],
      bounds,
    );
    expect(v.lost).toHaveLength(3);
  });

  it("explains a frozen worker's refused completion, including a job it started only after the thaw", () => {
    const v = judgeJobs(
      [
        rec("ack", 0, 9, { ids: ["1", "2"] }),
        rec("start", 10, 1, { job: "1", attempt: 1 }),
        rec("fault.freeze", 20, 100, { target: 1 }),
        rec("start", 2_500, 2, { job: "1", attempt: 2 }),
        rec("done", 2_520, 2, { job: "1", attempt: 2 }),
        rec("start", 2_540, 2, { job: "2", attempt: 2 }),
        rec("done", 2_560, 2, { job: "2", attempt: 2 }),
        rec("fault.thaw", 2_600, 100, { target: 1 }),
        rec("done", 2_610, 1, { job: "1", attempt: 1 }),
        rec("start", 2_620, 1, { job: "2", attempt: 1 }),
        rec("event", 2_630, 1, { event: "job.outcome_refused", id: "1", attempt: 1 }),
        rec("done", 2_640, 1, { job: "2", attempt: 1 }),
        rec("event", 2_650, 1, { event: "job.outcome_refused", id: "2", attempt: 1 }),
      ],
      [
        { id: "1", status: "succeeded", attempts: 2 },
        { id: "2", status: "succeeded", attempts: 2 },
      ],
      bounds,
    );
    expect(v.unexplained).toEqual([]);
    expect(v.explained).toEqual({ "frozen past the lease": 2 });
    expect(v.notes.join()).toMatch(/1 execution\(s\) started after their lease had lapsed/);
  });

  it("times a re-run from the freeze that caused it when the same worker was frozen twice", () => {
    const v = judgeJobs(
      [
        rec("ack", 0, 9, { ids: ["1", "2"] }),
        rec("start", 10, 1, { job: "1", attempt: 1 }),
        rec("fault.freeze", 20, 100, { target: 1 }),
        rec("start", 2_500, 2, { job: "1", attempt: 2 }),
        rec("done", 2_510, 2, { job: "1", attempt: 2 }),
        rec("fault.thaw", 2_600, 100, { target: 1 }),
        rec("event", 2_610, 1, { event: "job.outcome_refused", id: "1", attempt: 1 }),
        rec("start", 3_000, 1, { job: "2", attempt: 1 }),
        rec("fault.freeze", 3_100, 100, { target: 1 }),
        rec("start", 5_600, 2, { job: "2", attempt: 2 }),
        rec("done", 5_610, 2, { job: "2", attempt: 2 }),
        rec("fault.thaw", 5_700, 100, { target: 1 }),
        rec("event", 5_710, 1, { event: "job.lease_lost", id: "2", attempt: 1 }),
      ],
      [
        { id: "1", status: "succeeded", attempts: 2 },
        { id: "2", status: "succeeded", attempts: 2 },
      ],
      bounds,
    );
    expect(v.unexplained).toEqual([]);
    expect(v.recovery.find((r) => r.label === "freeze → re-run elsewhere")?.ms).toEqual([2_480, 2_500]);
  });
});

describe("the slots verdict", () => {
  it("reports a killed run never taken over and a slot nobody accounted for", () => {
    const v = judgeSlots(
      [rec("run.start", 1_000, 1, { slot: 1_000, missed: 0 }), rec("run.done", 1_500, 1, { slot: 1_000 }), rec("run.start", 3_000, 1, { slot: 3_000, missed: 0 }), rec("fault.kill", 3_100, 100, { target: 1 })],
      1_000,
      2_000,
    );
    expect(v.lost.join("\n")).toMatch(/never taken over/);
    expect(v.lost.join("\n")).toMatch(/neither ran/);
  });

  it("explains a slot taken over after its runner was killed, and accounts for skipped and missed slots", () => {
    const v = judgeSlots(
      [
        rec("run.start", 1_000, 1, { slot: 1_000, missed: 0 }),
        rec("fault.kill", 1_200, 100, { target: 1 }),
        rec("event", 2_000, 2, { event: "task.overlap_skipped", scheduledAt: 2_000 }),
        rec("run.start", 3_300, 2, { slot: 1_000, missed: 0 }),
        rec("run.done", 3_400, 2, { slot: 1_000 }),
        rec("run.start", 5_000, 2, { slot: 5_000, missed: 2 }),
        rec("run.done", 5_100, 2, { slot: 5_000 }),
      ],
      1_000,
      2_000,
    );
    expect(v.lost).toEqual([]);
    expect(v.unexplained).toEqual([]);
    expect(v.explained).toEqual({ killed: 1 });
  });
});

describe("the keys verdict", () => {
  it("reports two answers for one key and a takeover whose owner was alive", () => {
    const v = judgeKeys(
      [
        rec("fn.start", 10, 1, { key: "k", token: "a" }),
        rec("fn.start", 500, 2, { key: "k", token: "b" }),
        rec("fn.done", 600, 2, { key: "k", token: "b" }),
        rec("fn.done", 700, 1, { key: "k", token: "a" }),
        rec("answer", 610, 2, { key: "k", kind: "ran", token: "b" }),
        rec("answer", 710, 1, { key: "k", kind: "ran", token: "a" }),
      ],
      2_000,
    );
    expect(v.unexplained.join("\n")).toMatch(/taken over/);
    expect(v.unexplained.join("\n")).toMatch(/two answers for one key/);
  });

  it("explains the takeover of a killed owner's key and counts a caller that gave up as lost", () => {
    const v = judgeKeys(
      [
        rec("fn.start", 10, 1, { key: "k", token: "a" }),
        rec("fault.kill", 50, 100, { target: 1 }),
        rec("fn.start", 2_100, 2, { key: "k", token: "b" }),
        rec("fn.done", 2_200, 2, { key: "k", token: "b" }),
        rec("answer", 2_210, 2, { key: "k", kind: "ran", token: "b" }),
        rec("answer", 2_300, 3, { key: "k", kind: "cached", token: "b" }),
        rec("answer", 9_000, 4, { key: "k2", kind: "gave-up" }),
      ],
      2_000,
    );
    expect(v.unexplained).toEqual([]);
    expect(v.explained).toEqual({ killed: 1 });
    expect(v.lost).toHaveLength(2);
  });

  it("explains an operation a frozen owner began after the thaw, its claim taken over meanwhile", () => {
    const v = judgeKeys(
      [
        rec("fault.freeze", 100, 100, { target: 1 }),
        rec("fn.start", 2_200, 2, { key: "k", token: "b" }),
        rec("fault.thaw", 2_250, 100, { target: 1 }),
        rec("fn.start", 2_260, 1, { key: "k", token: "a" }),
        rec("fn.done", 2_300, 2, { key: "k", token: "b" }),
        rec("answer", 2_310, 2, { key: "k", kind: "ran", token: "b" }),
        rec("fn.done", 2_400, 1, { key: "k", token: "a" }),
        rec("answer", 2_410, 1, { key: "k", kind: "error", code: "TW_IDEMPOTENCY_CLAIM_LOST" }),
        rec("answer", 2_500, 1, { key: "k", kind: "cached", token: "b" }),
      ],
      2_000,
    );
    expect(v.unexplained).toEqual([]);
    expect(v.explained).toEqual({ "frozen past the lease": 1 });
    expect(v.lost).toEqual([]);
  });
});

describe("the ledger reader", () => {
  it("refuses a torn or corrupt line instead of skipping it", () => {
    const dir = mkdtempSync(join(tmpdir(), "tw-chaos-ledger-"));
    try {
      writeFileSync(join(dir, "worker-1.jsonl"), `${JSON.stringify(rec("start", 1, 1, { job: "1", attempt: 1 }))}\nnot json\n{"k":"done","t":2`);
      const { records, faults } = readLedgers(dir);
      expect(records).toHaveLength(1);
      expect(faults.map((f) => f.line)).toEqual([2, 3]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the flows verdict", () => {
  const job = (id: string, fields: Partial<FlowFinal> = {}): FlowFinal => ({ id, status: "succeeded", attempts: 1, queue: "chaos-child", parentId: null, key: null, createdAt: 0, ...fields });
  const ran = (id: string, start: number, done: number, pid = 1, attempt = 1) => [rec("start", start, pid, { job: id, attempt }), rec("done", done, pid, { job: id, attempt })];
  const throttle = { throttleMs: 300 };

  it("passes a parent that started after each child's accepted execution ended and read every child", () => {
    const finals = [job("1", { queue: "chaos-parent" }), job("2", { parentId: "1" }), job("3", { parentId: "1", attempts: 2 })];
    const records = [
      ...ran("2", 10, 20),
      ...ran("3", 10, 15, 1, 1),
      ...ran("3", 2_600, 2_650, 2, 2),
      ...ran("1", 2_700, 2_710),
      rec("parent.saw", 2_701, 1, { job: "1", attempt: 1, total: 2, ids: ["2", "3"], statuses: ["succeeded", "succeeded"] }),
    ];
    const v = judgeFlows(records, finals, throttle);
    expect(flowFailures(v)).toEqual([]);
    expect(v.parents).toBe(1);
  });

  it("reports a parent that started before a child's accepted execution ended, or read a child unfinished", () => {
    const finals = [job("1", { queue: "chaos-parent" }), job("2", { parentId: "1", attempts: 2 })];
    const early = judgeFlows([...ran("2", 10, 20, 1, 1), ...ran("2", 3_000, 3_050, 2, 2), ...ran("1", 100, 110)], finals, throttle);
    expect(early.earlyParents.join()).toMatch(/parent 1 attempt 1 started at 100, before its child 2 ended \(at 3050\)/);
    const unread = judgeFlows([...ran("2", 10, 20, 1, 2), ...ran("1", 100, 110), rec("parent.saw", 101, 1, { job: "1", attempt: 1, total: 1, ids: ["2"], statuses: ["running"] })], finals, throttle);
    expect(unread.earlyParents.join()).toMatch(/read 1 child results \(running\) of 1 children/);
  });

  it("reports two live jobs of one dedupe key, and a throttled key given two jobs within its window", () => {
    const overlap = judgeFlows([...ran("5", 10, 200), ...ran("6", 150, 300)], [job("5", { key: "skip-0", createdAt: 1 }), job("6", { key: "skip-0", createdAt: 2 })], throttle);
    expect(overlap.dedupe.join()).toMatch(/key skip-0: job 6 started at 150 while job 5 of the same key was live/);
    const serial = judgeFlows([...ran("5", 10, 200), ...ran("6", 250, 300)], [job("5", { key: "debounce-1", createdAt: 1 }), job("6", { key: "debounce-1", createdAt: 220 })], throttle);
    expect(serial.dedupe).toEqual([]);
    const throttled = judgeFlows([...ran("7", 10, 20), ...ran("8", 30, 40)], [job("7", { key: "throttle-2", createdAt: 0 }), job("8", { key: "throttle-2", createdAt: 299 })], throttle);
    expect(throttled.dedupe.join()).toMatch(/key throttle-2: jobs 7 and 8 created 299 ms apart, within the throttle of 300 ms/);
  });

  it("reports a call answered with a raw error, and any deadlock; a TickworkError is only counted", () => {
    const v = judgeFlows(
      [
        rec("call.error", 1, 3, { kind: "keyed", typed: false, name: "Error", error: "Error: insert of key s1 conflicted" }),
        rec("call.error", 2, 3, { kind: "flow", typed: true, name: "StoreUnavailableError", error: "..." }),
        rec("event", 3, 1, { event: "store.error", error: "deadlock detected" }),
      ],
      [],
      throttle,
    );
    expect(v.rawErrors).toHaveLength(1);
    expect(v.typedErrors).toBe(1);
    expect(v.deadlocks).toHaveLength(1);
    expect(flowFailures(v)).toHaveLength(2);
  });
});
