// A Worker's bindings and globals, as wrangler.jsonc and @cloudflare/workers-types give them
// (declarations only: see send-email.ts).
/* eslint-disable -- a prelude is declarations for the docs' code blocks (scripts/check-docs.ts), not a module */
interface Env {
  SCHEDULER: import("@cloudflare/workers-types/index.ts").DurableObjectNamespace<SchedulerDO>;
  PRICES: import("@cloudflare/workers-types/index.ts").KVNamespace;
  LOGS: import("tickwork/cloudflare").LogsBinding;
}
type DurableObjectState = import("tickwork/cloudflare").DurableObjectContext;
declare const env: Env;
declare function refreshPrices(env: Env, ctx: import("tickwork").TaskContext): Promise<{ refreshed: number }>;
