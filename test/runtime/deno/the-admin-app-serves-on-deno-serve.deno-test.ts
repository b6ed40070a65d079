import { adminApp } from "../../../src/server/index.js";
import { postgresCase, sqliteFileCase } from "../../support/stores.js";
import { TOKEN } from "../support/admin-over-http.js";
import { describeTheAdminAppServed } from "../support/the-admin-app-served.js";
import { denoRuntime } from "./deno-runtime.js";

describeTheAdminAppServed({
  title: "the admin app on Deno.serve ($name)",
  test: "serves the probes, the API behind the token and /metrics on 127.0.0.1",
  stores: [sqliteFileCase(), postgresCase()],
  runtime: denoRuntime,
  start: (tw, deno) => {
    const app = adminApp(tw, { token: TOKEN });
    const server = deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => app.fetch(request));
    return { url: `http://127.0.0.1:${server.addr.port}/`, close: () => server.shutdown() };
  },
});
