// workerd's built-in module, for this repository's own type checks: the real declaration from
// @cloudflare/workers-types (its importable form, which adds no globals that would clash with Node's).
// A project that depends on tickwork has its own (@cloudflare/workers-types or `wrangler types`).
declare module "cloudflare:workers" {
  import { CloudflareWorkersModule } from "@cloudflare/workers-types/index.ts";
  export import DurableObject = CloudflareWorkersModule.DurableObject;
  export import WorkerEntrypoint = CloudflareWorkersModule.WorkerEntrypoint;
  export import RpcTarget = CloudflareWorkersModule.RpcTarget;
}
