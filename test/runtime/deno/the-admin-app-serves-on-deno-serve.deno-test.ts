import { afterEach, describe, it } from "vitest";
import { adminApp } from "../../../src/server/index.js";
import { engineFor } from "../../support/queue-fixtures.js";
import { postgresCase, sqliteFileCase } from "../../support/stores.js";
import { TOKEN, expectTheAdminAppAnswers, oneMailJob } from "../support/admin-over-http.js";
import { denoRuntime, type DenoHttpServer } from "./deno-runtime.js";

describe.each([sqliteFileCase(), postgresCase()])("the admin app on Deno.serve ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  let server: DenoHttpServer | undefined;
  // Registered after engineFor's hook, so it runs first: the server stops before the engine does.
  afterEach(async () => {
    await server?.shutdown();
    server = undefined;
  });

  it("serves the probes, the API behind the token and /metrics on 127.0.0.1", async () => {
    const { tw } = await engine();
    await oneMailJob(tw);
    const app = adminApp(tw, { token: TOKEN });
    server = denoRuntime().serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => app.fetch(request));
    await expectTheAdminAppAnswers(`http://127.0.0.1:${server.addr.port}/`);
  });
});
