import { adminApp } from "../../../src/server/index.js";
import { postgresCase, sqliteFileCase } from "../../support/stores.js";
import { TOKEN } from "../support/admin-over-http.js";
import { describeTheAdminAppServed } from "../support/the-admin-app-served.js";
import { bunRuntime } from "./bun-runtime.js";

describeTheAdminAppServed({
  title: "the admin app on Bun.serve ($name)",
  test: "serves the probes, the API behind the token and /metrics on 127.0.0.1",
  stores: [sqliteFileCase(), postgresCase()],
  runtime: bunRuntime,
  start: (tw, bun) => {
    const app = adminApp(tw, { token: TOKEN });
    const server = bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => app.fetch(request) });
    return { url: `http://127.0.0.1:${server.port}/`, close: () => server.stop(true) };
  },
});
