import { describe, expect, it } from "vitest";
import { sqliteMemoryCase } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

/**
 * A scan, or a poller with a stale token, must not flood the log: 10,504 lines came from one timing
 * test before. The first wrong token of a quiet minute is logged at once; the rest of that minute
 * are one line with their count, written when the minute ends (on the engine's clock).
 */
describe("wrong-token warnings", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("a burst of 1,000 wrong-token requests logs two lines: the first, then the count of the rest", async () => {
    const a = await admin();
    const BURST = 1_000;
    let answered = 0;
    // 20 at a time over real HTTP: a burst, without exhausting the machine's sockets.
    for (let i = 0; i < BURST; i += 20) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, k) => a.request("GET", k % 2 ? "/api/queues" : "/api/overview", { token: `wrong-token-${i + k}-0123456789` })));
      answered += answers.filter((r) => r.status === 401).length;
    }
    expect(answered).toBe(BURST);
    expect(a.named("server.auth_failed")).toHaveLength(1);

    await a.clock.advance("59s");
    expect(a.named("server.auth_failed")).toHaveLength(1);
    await a.clock.advance("1s");
    const lines = a.named("server.auth_failed");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: "warn", reason: "wrong token", repeated: BURST - 1, intervalMs: 60_000, path: expect.stringMatching(/^\/api\/(queues|overview)$/) });
    expect(JSON.stringify(lines)).not.toContain("wrong-token-");

    // A quiet minute later, the next one is logged at once again; nothing is left to count.
    await a.clock.advance("5m");
    expect(a.named("server.auth_failed")).toHaveLength(2);
    await a.request("GET", "/api/queues", { token: "another-wrong-token-0123" });
    expect(a.named("server.auth_failed")).toHaveLength(3);
    await a.clock.advance("1m");
    expect(a.named("server.auth_failed")).toHaveLength(3);
    // 1,000 real HTTP round trips: a few seconds idle, over 30 s with two busy loops beside the suite.
  }, 120_000);

  it("the count pending when the server closes is logged then", async () => {
    const a = await admin();
    for (let i = 0; i < 3; i++) await a.request("GET", "/api/queues", { token: `wrong-token-${i}-0123456789` });
    expect(a.named("server.auth_failed")).toHaveLength(1);
    await a.close();
    expect(a.named("server.auth_failed").at(-1)).toMatchObject({ repeated: 2 });
  });
});
