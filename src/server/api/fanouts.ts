import type { Hono } from "hono";
import type { Tickwork } from "../../tickwork.js";
import type { Fanout } from "../../fanout/fanout.js";
import { ApiError } from "../errors.js";
import { parseParam, text } from "../validation.js";
import type { FanoutSummary } from "./types.js";

function declared(tw: Tickwork, name: string): Fanout<unknown> {
  const fanout = tw.fanouts.get(name);
  if (!fanout) {
    const names = [...tw.fanouts.keys()];
    throw new ApiError(404, "not_found", `fanout "${name}" is not declared in this process` + (names.length ? ` (declared: ${names.join(", ")})` : " (no fanout is declared)"));
  }
  return fanout;
}

export async function fanoutSummary(fanout: Fanout<unknown>): Promise<FanoutSummary> {
  const s = await fanout.status();
  return {
    name: s.name,
    version: s.version,
    nextAt: s.nextAt,
    nextReason: s.nextReason,
    consecutiveFailures: s.consecutiveFailures,
    lastError: s.lastError,
    lastPushAt: s.lastPushAt,
    lastSuccessAt: s.lastSuccessAt,
    converged: s.converged,
    targets: s.targets.map((t) => ({ id: t.id, group: t.group, version: t.version, behind: t.behind, failures: t.failures, lastError: t.lastError, pushedAt: t.pushedAt })),
  };
}

export function fanoutRoutes(api: Hono, tw: Tickwork): void {
  /** Each fan-out's version, its targets (behind, failing) and its next round (a retry or a reconciliation). */
  api.get("/fanouts", async (c) => c.json({ fanouts: await Promise.all([...tw.fanouts.values()].map(fanoutSummary)) }));

  /** Pushes the current state to every target at the next pass. */
  api.post("/fanouts/:fanout/reconcile", async (c) => {
    const fanout = declared(tw, parseParam(c, "fanout", text(200)));
    await fanout.reconcileNow();
    return c.json({ fanout: fanout.name, reconcile: "scheduled" });
  });
}
