import { describe, expect, it } from "vitest";
import { InvalidInputError, TickworkError } from "../../src/core/errors.js";
import { postgresCase, sqliteMemoryCase } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/** What pg raises for an id past bigint: its text names the type and echoes the value. */
function driverError(): Error {
  return Object.assign(new Error('value "99999999999999999999" is out of range for type bigint'), { code: "22003", severity: "ERROR", routine: "scanint8" });
}

/** The store's own methods are replaced to throw: the Durable Object store's live in workerd, out of reach. */
describe.each([sqliteMemoryCase(), postgresCase()])("errors behind the API ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("a driver's error is a 500 with a generic message; its text goes to the log only", async () => {
    const a = await admin();
    a.tw.store.queue.list = () => Promise.reject(driverError());
    const res = await a.get("/api/jobs");
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: "internal_error", message: "the request failed; the server's log has the details (event server.error)" });
    expect(res.text).not.toMatch(/bigint|99999/);
    expect(a.named("server.error")).toEqual([expect.objectContaining({ level: "error", method: "GET", path: "/api/jobs", error: expect.stringContaining("out of range for type bigint") })]);
  });

  it("an input error of the engine is a 400 with its message and its code, whichever copy of tickwork threw it", async () => {
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    // A second copy of tickwork's modules (a config loaded through another path) has other classes: the code decides.
    class ForeignInputError extends Error {
      readonly code = "TW_INVALID_DURATION";
    }
    const thrown: [Error, string, string][] = [
      [new InvalidInputError("jobs.list: key is not well-formed Unicode"), "jobs.list: key is not well-formed Unicode", "TW_INVALID_INPUT"],
      [new TickworkError("TW_UNKNOWN_TASK", 'unknown task "x"'), 'unknown task "x"', "TW_UNKNOWN_TASK"],
      [new ForeignInputError("invalid duration \"soon\""), 'invalid duration "soon"', "TW_INVALID_DURATION"],
    ];
    for (const [error, message, code] of thrown) {
      a.tw.store.queue.list = () => Promise.reject(error);
      const res = await a.get("/api/jobs");
      expect(res.status, message).toBe(400);
      expect(res.body).toEqual({ error: "invalid_input", code, message });
    }
    // A code that is not an input error's stays a 500.
    a.tw.store.queue.list = () => Promise.reject(new TickworkError("TW_JOB_LEASE_LOST", "lease lost"));
    expect((await a.get("/api/jobs")).status).toBe(500);
  });
});
