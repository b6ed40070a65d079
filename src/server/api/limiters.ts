import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import { durationMs } from "../../core/options.js";
import type { Limiter } from "../../queue/flow-control/limiter.js";
import { ApiError } from "../errors.js";
import { instant, name, parseBody, parseParam, resolveInstant } from "../validation.js";
import type { LimiterView } from "./types.js";

const PAUSE_SHAPE = 'expected { "until": <epoch ms or ISO time> } or { "for": <a duration such as "90s"> }';
/** One object rather than a union of two, so that a bad `until` or `for` is reported by its name. */
const PauseBody = z
  .object({ until: instant.optional(), for: durationMs.optional() }, { error: (issue) => (issue.code === "invalid_type" ? PAUSE_SHAPE : undefined) })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.until === undefined) === (body.for === undefined)) ctx.addIssue({ code: "custom", message: `give until or for, one of them: ${PAUSE_SHAPE}` });
  });

/** Why a limiter paused, in its `limiter.paused` event. */
const REASON = "paused through the admin API";

function defined(tw: Tickwork, raw: string): Limiter {
  const limiters = tw.limiters();
  const limiter = limiters.find((l) => l.name === raw);
  if (!limiter) {
    const names = limiters.map((l) => l.name);
    throw new ApiError(404, "not_found", `limiter "${raw}" is not defined in this process` + (names.length ? ` (defined: ${names.join(", ")})` : " (no limiter is defined)"));
  }
  return limiter;
}

export async function limiterViews(tw: Tickwork): Promise<LimiterView[]> {
  return Promise.all(
    tw.limiters().map(async (l) => {
      const s = await l.state();
      return { name: s.name, max: s.max, perMs: s.perMs, burst: s.burst, tokens: s.tokens, pausedUntil: s.pausedUntil, nextTokenAt: s.nextTokenAt };
    }),
  );
}

export function limiterRoutes(api: Hono, tw: Tickwork): void {
  /** The limiters this process defined, with their tokens and pauses as every process sees them. */
  api.get("/limiters", async (c) => c.json({ limiters: await limiterViews(tw) }));

  /** Pauses the limiter for every process: no token is given until then (as after an upstream's 429). */
  api.post("/limiters/:limiter/pause", async (c) => {
    const limiter = defined(tw, parseParam(c, "limiter", name("limiter")));
    const body = await parseBody(c, PauseBody, '{"for":"90s"} or {"until":"2026-01-01T12:00:00Z"}');
    const now = tw.clock.now();
    if (body.for !== undefined) {
      if (body.for <= 0) throw new ApiError(400, "invalid_body", "for: must be longer than 0", [{ path: "for", message: "must be longer than 0" }]);
      await limiter.pauseUntil(now + body.for, REASON);
      return c.json({ limiter: limiter.name, pausedUntil: now + body.for });
    }
    const at = resolveInstant(body.until!, now);
    if (at <= now) throw new ApiError(400, "invalid_body", `until: ${new Date(at).toISOString()} is not in the future`, [{ path: "until", message: "not in the future" }]);
    await limiter.pauseUntil(at, REASON);
    return c.json({ limiter: limiter.name, pausedUntil: at });
  });

  /** Ends a pause at once, by hand or an upstream's, for every process. */
  api.post("/limiters/:limiter/resume", async (c) => {
    const limiter = defined(tw, parseParam(c, "limiter", name("limiter")));
    await limiter.resume();
    return c.json({ limiter: limiter.name, resumed: true });
  });
}
