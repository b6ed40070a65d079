import { describe, expect, it } from "vitest";
import type { TaskStatus } from "../../src/schedule/task.js";
import { allStoreCases } from "../support/stores.js";
import { T0 } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";

type Status = { pausedUntil: number | null; tasks: TaskStatus[] };

describe.each(allStoreCases())("/api/tasks ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("reports each task's last run, next run, consecutive failures and backoff", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("30m") });
    a.tw.task("sweep", { every: "5m", run: () => { throw new Error("chain unreachable"); } });
    await a.clock.advance("5m");
    await a.tw.tick();

    const { status, body } = await a.get<Status>("/api/tasks");
    expect(status).toBe(200);
    const [prices, sweep] = body.tasks;
    expect(prices).toMatchObject({ name: "prices", lastOutcome: "backed_off", lastRunAt: T0 + 300_000, nextRunAfter: T0 + 300_000 + 1_800_000, consecutiveFailures: 0, paused: false });
    expect(sweep).toMatchObject({ name: "sweep", lastOutcome: "failed", consecutiveFailures: 1, nextRunAt: T0 + 600_000 });
    expect(sweep!.lastError).toContain("chain unreachable");
  });

  it("runs a task now and returns its result; runs all with the name all", async () => {
    const a = await admin();
    let runs = 0;
    a.tw.task("prices", { every: "5m", run: () => ++runs });
    a.tw.task("sweep", { every: "15m", run: () => "swept" });

    const one = await a.post<{ results: unknown[] }>("/api/tasks/prices/run");
    expect(one.status).toBe(200);
    expect(one.body.results).toMatchObject([{ task: "prices", outcome: "succeeded", result: 1 }]);

    const all = await a.post<{ results: unknown[] }>("/api/tasks/all/run");
    expect(all.body.results).toMatchObject([
      { task: "prices", outcome: "succeeded", result: 2 },
      { task: "sweep", outcome: "succeeded", result: "swept" },
    ]);
  });

  it("pauses one task until a time or for a duration, pauses all, and resumes", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: () => 1 });
    a.tw.task("sweep", { every: "15m", run: () => 2 });

    const paused = await a.post("/api/tasks/prices/pause", { until: "2h" });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ task: "prices", pausedUntil: T0 + 7_200_000 });
    let status = (await a.get<Status>("/api/tasks")).body;
    expect(status.tasks.map((t) => [t.name, t.paused, t.pausedUntil])).toEqual([["prices", true, T0 + 7_200_000], ["sweep", false, null]]);

    await a.post("/api/tasks/prices/pause", { until: new Date(T0 + 3_600_000).toISOString() });
    expect((await a.get<Status>("/api/tasks")).body.tasks[0]!.pausedUntil).toBe(T0 + 3_600_000);

    await a.post("/api/tasks/all/pause", { until: T0 + 600_000 });
    status = (await a.get<Status>("/api/tasks")).body;
    expect(status.pausedUntil).toBe(T0 + 600_000);
    expect(status.tasks.every((t) => t.paused)).toBe(true);

    expect((await a.post("/api/tasks/prices/resume")).body).toEqual({ task: "prices", resumed: true });
    expect((await a.post("/api/tasks/all/resume")).body).toEqual({ task: "all", resumed: true });
    status = (await a.get<Status>("/api/tasks")).body;
    expect(status.pausedUntil).toBeNull();
    expect(status.tasks.some((t) => t.paused)).toBe(false);
  });

  it("answers 404 for a task that is not defined, naming the defined ones", async () => {
    const a = await admin();
    a.tw.task("prices", { every: "5m", run: () => 1 });
    for (const path of ["/api/tasks/nope/run", "/api/tasks/nope/resume"]) {
      const res = await a.post(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "not_found", message: 'task "nope" is not defined in this process (defined: prices)' });
    }
  });
});
