import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../support/real-time.js";
import { startObjects, type Objects } from "./support/objects.js";

/** Seed 003's root cause: a module whose logger defaulted to the console, where nobody looked. */
describe.concurrent("the object's events go to the sink its configuration names, and to the console only when that sink refuses them", () => {
  let objects: Objects;
  const console: string[] = [];
  beforeAll(async () => {
    objects = await startObjects({ stdio: (line) => console.push(line) });
  });
  afterAll(() => objects?.dispose());

  it("with { binding: 'LOGS', appId }, events reach the logging service as entries: name as message, fields and level as context, the object named", async () => {
    await eventually(async () => (await objects.call<ObjectStatus>("ISOLATED", "logs", "status")).tasks.every((t) => t.runs >= 1), "a run of each task", 20_000);
    const entries = await objects.logs("isolated", "Isolated:logs");
    const started = entries.find((e) => e.message === "engine.started")!;
    expect(started).toMatchObject({ level: "INFO", context: { level: "info", object: "Isolated:logs", logSink: "workersLogs(isolated)", logSinkChosenBy: "the logger option", store: "durableObject(Isolated:logs)" } });
    const failed = entries.find((e) => e.message === "task.failed")!;
    expect(failed).toMatchObject({ level: "ERROR", context: { level: "error", task: "tenero", error: expect.stringContaining("Tenero answered 503"), time: expect.any(Number) } });
    const succeeded = entries.find((e) => e.message === "task.succeeded")!;
    expect(succeeded).toMatchObject({ level: "INFO", context: { task: "sweep" } });
  });

  it("a binding that is not bound is an error naming it and how to bind it, on every call, never a quiet fallback", async () => {
    const message = /env\.NO_SUCH_BINDING is not bound; it should be a logging service \(wrangler\.jsonc "services" with binding "NO_SUCH_BINDING"\)/;
    await expect(objects.call("UNBOUND", "a", "status")).rejects.toThrow(message);
    await expect(objects.call("UNBOUND", "a", "refreshNow", "all")).rejects.toThrow(message);
  });

  it("a bound service that refuses its calls: its events go to the console after one line saying why, and status() names the console", async () => {
    expect((await objects.call<ObjectStatus>("REFUSED", "a", "status")).logSink).toBe("workersLogs(refused)");
    await eventually(() => console.some((line) => line.includes("refused a call")), "the line saying the binding refused a call", 20_000);
    expect((await objects.call<ObjectStatus>("REFUSED", "a", "status")).logSink).toBe("jsonLines(console), after the binding of workersLogs(refused) refused a call");
    const said = console.filter((line) => line.includes("refused a call"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('tickwork: the logs binding of workersLogs(refused) refused a call (Error: Worker "worker-logs" not found): its events go to the console from now on');
    const events = console.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { event: string; object?: string });
    expect(events.find((e) => e.event === "engine.started")).toBeDefined();
  });

  it("no logger choice at all is refused when the object is built, with the choices named", async () => {
    await expect(objects.call("UNCONFIGURED", "a", "status")).rejects.toThrow(/Unconfigured: logger: expected \{ binding: "LOGS", appId: "my-app" \}, "console", or a sink/);
  });

  it('the console is used only when chosen ("console"), and status() says so', async () => {
    expect((await objects.call<ObjectStatus>("KVCACHED", "console", "status")).logSink).toBe("jsonLines(console)");
  });
});
