import { afterEach, describe, it } from "vitest";
import type { Tickwork } from "../../../src/tickwork.js";
import { engineFor } from "../../support/queue-fixtures.js";
import type { StoreCase } from "../../support/stores.js";
import { expectTheAdminAppAnswers, oneMailJob } from "./admin-over-http.js";

/** A server started for the admin app: its base URL and how to stop it with its open connections. */
export interface StartedServer {
  url: string;
  close(): Promise<void>;
}

export interface AdminAppServed<R> {
  /** The describe title, with `$name` for the store case. */
  title: string;
  /** The test title. */
  test: string;
  stores: StoreCase[];
  /** The runtime's global, asked for first so that the test fails at once outside that runtime. */
  runtime(): R;
  /** Serves the engine's admin app on 127.0.0.1 behind TOKEN, the way the runtime under test does. */
  start(tw: Tickwork, runtime: R): StartedServer | Promise<StartedServer>;
}

/**
 * One body for every runtime and every way of serving: an engine with one pending mail job, the
 * admin app served on a real socket, and the checks of expectTheAdminAppAnswers against it. The
 * runtimes differ only in the server they start, which `start` gives.
 */
export function describeTheAdminAppServed<R>({ title, test, stores, runtime, start }: AdminAppServed<R>): void {
  describe.each(stores)(title, (storeCase) => {
    const engine = engineFor(storeCase);
    let server: StartedServer | undefined;
    // Registered after engineFor's hook, so it runs first: the server stops before the engine does.
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it(test, async () => {
      const inRuntime = runtime();
      const { tw } = await engine();
      await oneMailJob(tw);
      server = await start(tw, inRuntime);
      await expectTheAdminAppAnswers(server.url);
    });
  });
}
