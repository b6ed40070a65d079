import { afterEach, describe, it } from "vitest";
import { serve, type Serving } from "../../../src/server/index.js";
import { engineFor } from "../../support/queue-fixtures.js";
import { sqliteFileCase } from "../../support/stores.js";
import { TOKEN, expectTheAdminAppAnswers, oneMailJob } from "../support/admin-over-http.js";
import { denoRuntime } from "./deno-runtime.js";

// serve() is written for Node (@hono/node-server on node:http); an application moving to Deno keeps it.
describe.each([sqliteFileCase()])("serve() from tickwork/server under Deno ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  let serving: Serving | undefined;
  afterEach(async () => {
    await serving?.close();
    serving = undefined;
  });

  it("serves the probes, the API behind the token and /metrics on Deno's node:http", async () => {
    denoRuntime();
    const { tw } = await engine();
    await oneMailJob(tw);
    serving = await serve(tw, { port: 0, token: TOKEN });
    await expectTheAdminAppAnswers(serving.url);
  });
});
