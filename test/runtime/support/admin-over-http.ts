import { expect } from "vitest";
import type { Tickwork } from "../../../src/tickwork.js";
import type { QueueSummary } from "../../../src/server/api/types.js";

export const TOKEN = "runtime-admin-token-0123456789";

/** Declares the queue the checks look for and puts one pending job in it. */
export async function oneMailJob(tw: Tickwork): Promise<void> {
  const mail = tw.queue("mail", { handler: () => {} });
  await mail.enqueue({ to: "ada@example.com" });
}

async function call(base: string, method: string, path: string, token: string | null): Promise<{ status: number; type: string; text: string }> {
  const response = await fetch(new URL(path, base), { method, headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

/**
 * What a runtime's HTTP server must carry for the admin app, checked over a real socket: the open
 * probes, a read and a write of the API behind the token, the token refused when missing, and the
 * Prometheus text (`oneMailJob` ran first).
 */
export async function expectTheAdminAppAnswers(base: string): Promise<void> {
  expect(await call(base, "GET", "/healthz", null)).toMatchObject({ status: 200, text: JSON.stringify({ status: "ok" }) });
  const ready = await call(base, "GET", "/readyz", null);
  expect(ready.status).toBe(200);
  expect(JSON.parse(ready.text)).toMatchObject({ status: "ready" });

  expect((await call(base, "GET", "/api/queues", null)).status).toBe(401);
  const queues = await call(base, "GET", "/api/queues", TOKEN);
  expect(queues.status).toBe(200);
  const mail = (JSON.parse(queues.text) as { queues: QueueSummary[] }).queues.find((q) => q.name === "mail");
  expect(mail).toMatchObject({ declared: true, hasHandler: true, counts: { pending: 1 }, flow: { paused: false } });

  const paused = await call(base, "POST", "/api/queues/mail/pause", TOKEN);
  expect(paused.status).toBe(200);
  expect(JSON.parse(paused.text)).toEqual({ queue: "mail", group: null, changed: true });
  const after = JSON.parse((await call(base, "GET", "/api/queues", TOKEN)).text) as { queues: QueueSummary[] };
  expect(after.queues.find((q) => q.name === "mail")?.flow?.paused).toBe(true);

  const metrics = await call(base, "GET", "/metrics", TOKEN);
  expect(metrics.status).toBe(200);
  expect(metrics.type).toMatch(/^text\/plain/);
  expect(metrics.text).toContain('tickwork_jobs{queue="mail",status="pending"} 1');
}
