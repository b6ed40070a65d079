import { describe, expect, it } from "vitest";
import type { QueueControlResult, QueueFlowView, QueueSummary } from "../../src/server/index.js";
import { allStoreCases, sqliteMemoryCase } from "../support/stores.js";
import { T0 } from "../support/queue-fixtures.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("POST /api/queues/:queue/pause, /resume and GET /api/queues/:queue/flow ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("pauses a whole queue so that no job starts, says whether it changed, and resumes it", async () => {
    const a = await admin();
    const ran: number[] = [];
    const mail = a.tw.queue<number>("mail", { handler: (job) => void ran.push(job.payload) });
    await mail.enqueue(1);

    const paused = await a.post<QueueControlResult>("/api/queues/mail/pause");
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ queue: "mail", group: null, changed: true });
    expect((await a.post<QueueControlResult>("/api/queues/mail/pause", {})).body).toEqual({ queue: "mail", group: null, changed: false });
    await a.tw.tick();
    expect(ran).toEqual([]);

    const flow = await a.get<{ flow: QueueFlowView }>("/api/queues/mail/flow");
    expect(flow.status).toBe(200);
    expect(flow.body.flow).toMatchObject({ name: "mail", paused: true, pausedAt: T0, pausedGroups: [], pending: 1, running: 0, globalConcurrency: null, heldBy: "paused" });
    const listed = (await a.get<{ queues: QueueSummary[] }>("/api/queues")).body.queues;
    expect(listed.find((q) => q.name === "mail")?.flow).toMatchObject({ paused: true, pending: 1 });

    expect((await a.post<QueueControlResult>("/api/queues/mail/resume")).body).toEqual({ queue: "mail", group: null, changed: true });
    expect((await a.post<QueueControlResult>("/api/queues/mail/resume")).body).toEqual({ queue: "mail", group: null, changed: false });
    await a.tw.tick();
    expect(ran).toEqual([1]);
    expect((await a.get<{ flow: QueueFlowView }>("/api/queues/mail/flow")).body.flow).toMatchObject({ paused: false, pausedAt: null, pending: 0 });
  });

  it("pauses one group: the other groups run, the flow lists it among the paused groups, and resuming it lets its jobs run", async () => {
    const a = await admin();
    const ran: string[] = [];
    const work = a.tw.queue<string>("work", { concurrency: 5, group: (tenant) => tenant, handler: (job) => void ran.push(job.payload) });

    expect((await a.post<QueueControlResult>("/api/queues/work/pause", { group: "acme" })).body).toEqual({ queue: "work", group: "acme", changed: true });
    await work.enqueueMany([{ payload: "acme" }, { payload: "acme" }, { payload: "globex" }]);
    await a.tw.tick();
    expect(ran).toEqual(["globex"]);

    const { flow } = (await a.get<{ flow: QueueFlowView }>("/api/queues/work/flow")).body;
    expect(flow).toMatchObject({ paused: false, pausedGroups: ["acme"], pending: 2 });
    expect(flow.groups).toEqual([{ group: "acme", pending: 2, running: 0 }]);

    expect((await a.post<QueueControlResult>("/api/queues/work/resume", { group: "acme" })).body).toEqual({ queue: "work", group: "acme", changed: true });
    await a.tw.tick();
    expect(ran.sort()).toEqual(["acme", "acme", "globex"]);
    expect((await a.get<{ flow: QueueFlowView }>("/api/queues/work/flow")).body.flow.pausedGroups).toEqual([]);
  });

  it("reports the limits: globalConcurrency, the shared budgets' tokens and the busiest groups, as many as ?groups asks", async () => {
    const a = await admin();
    const prices = a.tw.limiter("prices-api", { max: 10, per: "1m", burst: 4 });
    const work = a.tw.queue<string>("work", {
      globalConcurrency: 3,
      groupConcurrency: 1,
      rateLimit: { max: 60, per: "1m", scope: "global" },
      limiter: prices,
      group: (tenant) => tenant,
    });
    await work.enqueueMany([...Array.from({ length: 3 }, () => ({ payload: "acme" })), { payload: "globex" }, { payload: "globex" }, { payload: "initech" }]);
    await prices.tryAcquire(3);

    const { flow } = (await a.get<{ flow: QueueFlowView }>("/api/queues/work/flow?groups=2")).body;
    expect(flow).toMatchObject({ globalConcurrency: 3, groupConcurrency: 1, running: 0, pending: 6, paused: false });
    expect(flow.buckets).toEqual([
      { bucket: "queue:work", intervalMs: 1_000, burst: 1, tokens: 1, pausedUntil: null, nextTokenAt: T0 },
      { bucket: "limiter:prices-api", intervalMs: 6_000, burst: 4, tokens: 1, pausedUntil: null, nextTokenAt: T0 },
    ]);
    expect(flow.groups).toEqual([
      { group: "acme", pending: 3, running: 0 },
      { group: "globex", pending: 2, running: 0 },
    ]);
    expect((await a.get<{ flow: QueueFlowView }>("/api/queues/work/flow?groups=0")).body.flow.groups).toEqual([]);
  });

  it("a queue not declared here is a 404 with the engine's code, naming the declared queues", async () => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    for (const [method, path] of [["POST", "/api/queues/nope/pause"], ["POST", "/api/queues/nope/resume"], ["GET", "/api/queues/nope/flow"]] as const) {
      const res = await a.request(method, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual({ error: "not_found", code: "TW_UNKNOWN_QUEUE", message: 'queue "nope" is not declared in this process (declared: mail)' });
    }
  });

  it("a bad group, body or query is a 400 naming the field, and pauses nothing", async () => {
    const a = await admin();
    a.tw.queue("work", { group: true });
    const cases: [string, unknown, string, RegExp][] = [
      ["/api/queues/work/pause", { group: "" }, "invalid_body", /^group: must not be empty$/],
      ["/api/queues/work/pause", { group: "g".repeat(256) }, "invalid_body", /^group: at most 255 characters$/],
      ["/api/queues/work/pause", { group: 7 }, "invalid_body", /^group: expected a string$/],
      ["/api/queues/work/pause", '{"group":"a\\u0000b"}', "invalid_body", /^group: contains a NUL character/],
      ["/api/queues/work/resume", '{"group":"\\ud800"}', "invalid_body", /^group: is not well-formed Unicode/],
      ["/api/queues/work/pause", { group: "a", until: "1h" }, "invalid_body", /until/],
      ["/api/queues/work/pause", ["a"], "invalid_body", /^expected an object such as \{"group":"tenant-1"\}, or no body$/],
      ["/api/queues/work/pause", "{group", "invalid_body", /^the body must be JSON, e\.g\. \{"group":"tenant-1"\}/],
      ["/api/queues/bad%20name/pause", undefined, "invalid_path", /^queue: a queue name is 1-128 letters/],
    ];
    for (const [path, body, error, message] of cases) {
      const res = await a.request("POST", path, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toBe(error);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
    for (const query of ["groups=-1", "groups=1001", "groups=some", "group=a"]) {
      const res = await a.get(`/api/queues/work/flow?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.message, query).toMatch(/^(groups: an integer from 0 to 1000|unknown parameter "group" \(expected groups\))$/);
    }
    // A group of a queue that has none: the engine's refusal, with its code.
    a.tw.queue("plain");
    const ungrouped = await a.post("/api/queues/plain/pause", { group: "acme" });
    expect(ungrouped.status).toBe(400);
    expect(ungrouped.body).toEqual({ error: "invalid_input", code: "TW_INVALID_INPUT", message: 'queues.pause: group needs a grouped queue: declare "plain" with group, groupConcurrency or groupRateLimit' });
    for (const status of await a.tw.queues.status()) expect(status).toMatchObject({ paused: false, pausedGroups: [] });
  });
});

describe("pausing queues needs the token even when reads are open", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("with auth: writes, the flow is open to read but pause and resume answer 401 without the token", async () => {
    const a = await admin({ server: { auth: "writes" } });
    a.tw.queue("mail", { handler: () => {} });
    expect((await a.request("GET", "/api/queues/mail/flow", { token: null })).status).toBe(200);
    for (const path of ["/api/queues/mail/pause", "/api/queues/mail/resume"]) {
      const res = await a.request("POST", path, { token: null });
      expect(res.status, path).toBe(401);
    }
    expect((await a.tw.queues.status("mail"))[0]!.paused).toBe(false);
  });
});
