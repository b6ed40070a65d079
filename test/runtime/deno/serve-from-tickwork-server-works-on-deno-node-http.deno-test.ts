import { serve } from "../../../src/server/index.js";
import { sqliteFileCase } from "../../support/stores.js";
import { TOKEN } from "../support/admin-over-http.js";
import { describeTheAdminAppServed } from "../support/the-admin-app-served.js";
import { denoRuntime } from "./deno-runtime.js";

// serve() is written for Node (@hono/node-server on node:http); an application moving to Deno keeps it.
describeTheAdminAppServed({
  title: "serve() from tickwork/server under Deno ($name)",
  test: "serves the probes, the API behind the token and /metrics on Deno's node:http",
  stores: [sqliteFileCase()],
  runtime: denoRuntime,
  start: (tw) => serve(tw, { port: 0, token: TOKEN }),
});
