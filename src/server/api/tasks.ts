import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import { ApiError } from "../errors.js";
import { instant, name, parseBody, parseParam, resolveInstant } from "../validation.js";

const PauseBody = z.object({ until: instant }).strict();

/** A task named in a path: defined in this process, or "all". */
async function taskParam(tw: Tickwork, raw: string): Promise<string> {
  if (raw === "all") return raw;
  const { tasks } = await tw.scheduler.status();
  if (!tasks.some((t) => t.name === raw)) {
    const names = tasks.map((t) => t.name);
    throw new ApiError(404, "not_found", `task "${raw}" is not defined in this process` + (names.length ? ` (defined: ${names.join(", ")})` : " (no task is defined)"));
  }
  return raw;
}

export function taskRoutes(api: Hono, tw: Tickwork): void {
  api.get("/tasks", async (c) => c.json(await tw.scheduler.status()));

  /** Runs now (clearing a backoff); a task already running elsewhere comes back `skipped`. */
  api.post("/tasks/:task/run", async (c) => {
    const task = await taskParam(tw, parseParam(c, "task", name("task")));
    return c.json({ results: await tw.scheduler.runNow(task) });
  });

  api.post("/tasks/:task/pause", async (c) => {
    const task = await taskParam(tw, parseParam(c, "task", name("task")));
    const { until } = await parseBody(c, PauseBody, '{"until":"1h"} or {"until":"2026-01-01T12:00:00Z"}');
    const now = tw.clock.now();
    const at = resolveInstant(until, now);
    if (at <= now) throw new ApiError(400, "invalid_body", `until: ${new Date(at).toISOString()} is not in the future`, [{ path: "until", message: "not in the future" }]);
    await tw.scheduler.pauseUntil(at, task === "all" ? undefined : task);
    return c.json({ task, pausedUntil: at });
  });

  /** Undoes pauses and closes open breakers. */
  api.post("/tasks/:task/resume", async (c) => {
    const task = await taskParam(tw, parseParam(c, "task", name("task")));
    await tw.scheduler.resume(task === "all" ? undefined : task);
    return c.json({ task, resumed: true });
  });
}
