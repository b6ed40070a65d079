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

  /**
   * Through a typed stub, enqueue() and status() come back as `never` (their results carry
   * `unknown` payloads, which Workers RPC types cannot serialize), so the Worker calls this instead.
   */
  async greet(name: string): Promise<{ job: string; queues: string[] }> {
    const job = await this.enqueue("greet", { name });
    const status = await this.status();
    return { job: job.id, queues: status.queues.map((q) => q.queue) };
  }
}

export default {
  async fetch(_request, env) {
    const jobs = env.JOBS.get(env.JOBS.idFromName("consumer"));
    const { job, queues } = await jobs.greet("ada");
    return Response.json({ job, queues, clock: typeof fakeClock });
  },
} satisfies ExportedHandler<Env>;
