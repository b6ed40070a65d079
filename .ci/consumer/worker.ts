// The Cloudflare-only shape: nothing but tickwork and its three dependencies installed, types from
// @cloudflare/workers-types and no @types/node. A Durable Object runs the engine on its own SQLite.
import type { Tickwork } from "tickwork";
import { TickworkObject, type DurableObjectContext } from "tickwork/cloudflare";
import { idempotencyKey } from "tickwork/hono";
import { fakeClock } from "tickwork/testing";

interface Env {
  JOBS: DurableObjectNamespace<Jobs>;
}

export class Jobs extends TickworkObject<Env> {
  constructor(ctx: DurableObjectContext, env: Env) {
    super(ctx, env, { logger: () => {} });
  }

  protected setup(tw: Tickwork): void {
    tw.queue<{ name: string }>("greet", { handler: () => {} });
    if (typeof idempotencyKey({ idempotency: tw.idempotency }) !== "function") throw new Error("tickwork/hono: no middleware");
  }
}

export default {
  async fetch(_request, env) {
    // The RPC methods through the typed stub: their answers keep their types (not `never`).
    const jobs = env.JOBS.get(env.JOBS.idFromName("consumer"));
    const job = await jobs.enqueue("greet", { name: "ada" });
    const status = await jobs.status();
    const queues: string[] = status.queues.map((q) => q.queue);
    const lastResults = status.tasks.map((t) => t.lastResult);
    return Response.json({ job: job.id, payload: job.payload, queues, tasks: lastResults.length, clock: typeof fakeClock });
  },
} satisfies ExportedHandler<Env>;
