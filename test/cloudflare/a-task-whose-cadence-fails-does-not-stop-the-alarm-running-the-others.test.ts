import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import type { RelayedAnswer, RelayedCall } from "./fixtures/rpc-relay.js";
import { eventually } from "../support/real-time.js";
import type { LoggedEntry } from "./support/objects.js";
import { COMPATIBILITY_DATE, bundleWorker, fixture, startWorkerd } from "./support/workerd.js";

/** The first 29 February after `t`. */
function nextLeapDay(t: number): number {
  for (let year = new Date(t).getUTCFullYear(); ; year++) {
    const at = Date.UTC(year, 1, 29);
    if (new Date(at).getUTCMonth() === 1 && at > t) return at;
  }
}

describe("a Durable Object's alarm keeps running every task whose cadence works", () => {
  let mf: Miniflare;
  beforeAll(async () => {
    // croner is replaced by a wrapper that fails on one pattern at run time (fixtures/failing-croner.ts).
    const [objects, logs] = await Promise.all([
      bundleWorker(fixture("cadence-objects.ts"), { croner: fixture("failing-croner.ts") }),
      bundleWorker(fixture("logs-service.ts")),
    ]);
    mf = await startWorkerd({
      workers: [
        {
          name: "objects",
          modules: true,
          script: objects,
          compatibilityDate: COMPATIBILITY_DATE,
          durableObjects: { SCHEDULED: { className: "Scheduled", useSQLite: true } },
          serviceBindings: { LOGS: { name: "logs", entrypoint: "LogsRPC" } },
        },
        { name: "logs", modules: true, script: logs, compatibilityDate: COMPATIBILITY_DATE },
      ],
    });
  });
  afterAll(() => mf?.dispose());

  const status = async (): Promise<ObjectStatus> => {
    const call: RelayedCall = { binding: "SCHEDULED", object: "v1", method: "status", args: [] };
    const answer = (await (await mf.dispatchFetch("http://objects/rpc", { method: "POST", body: JSON.stringify(call) })).json()) as RelayedAnswer;
    if (!answer.ok) throw new Error(`${answer.error.name}: ${answer.error.message}`);
    return answer.value as ObjectStatus;
  };
  const logged = async (message: string): Promise<LoggedEntry[]> => {
    const entries = (await (await (await mf.getWorker("logs")).fetch("http://logs/entries")).json()) as LoggedEntry[];
    return entries.filter((e) => e.appId === "cadence" && e.message === message);
  };

  it("beside a 29 February cron and a cadence that throws at every tick, the 1s heartbeat runs on each alarm, and the failure is the task's", async () => {
    // The first call arms the alarm; the heartbeat then runs every second.
    const s = await eventually(async () => {
      const current = await status();
      return (current.tasks.find((t) => t.name === "heartbeat")?.runs ?? 0) >= 3 && current;
    }, "three heartbeats", 15_000);

    const byName = Object.fromEntries(s.tasks.map((t) => [t.name, t]));
    expect(byName["heartbeat"]).toMatchObject({ lastOutcome: "succeeded", scheduleError: null, consecutiveFailures: 0 });
    expect(byName["leap-day"]).toMatchObject({ schedule: "cron 0 0 29 2 * (UTC)", nextRunAt: nextLeapDay(Date.now()), scheduleError: null, runs: 0 });
    expect(byName["fragile"]).toMatchObject({ nextRunAt: null, runs: 0 });
    expect(byName["fragile"]!.scheduleError).toMatch(/task "fragile": cron "\*\/10 \* \* \* \*" failed: TypeError/);

    // Logged as the task's failure, once for the run of failures; no tick failed, none was retried.
    const failed = await logged("task.schedule_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: "ERROR", context: { task: "fragile", error: expect.stringContaining("TypeError") } });
    expect(await logged("alarm.failed")).toEqual([]);
    expect(s.lastTick!.retryCount).toBe(0);
    // The alarm is armed for the next heartbeat, not left at the ceiling.
    expect(s.alarmAt! - s.lastTick!.at).toBeLessThan(5_000);
  });
});
