import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Miniflare } from "miniflare";
import type { TestProject } from "vitest/node";
import { COMPATIBILITY_DATE, bundleWorker, fixture } from "./workerd.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Answers with the address of the run's workerd for the Durable Object store (test/support/stores.ts, durableObjectCase). */
    storeHostUrl: string;
  }
}

/**
 * Vitest global setup: one workerd for the whole run, holding every object the contract suites
 * create, so no test process pays for importing miniflare and starting workerd (about 1.5 s each).
 * A small HTTP server is up from the start and answers with workerd's address, starting it on the
 * first ask: a run without Durable Object tests never starts it. Store operations then go from the
 * test process to workerd directly.
 */
export default async function startStoreHost(project: TestProject): Promise<() => Promise<void>> {
  let workerd: Promise<Miniflare> | undefined;
  const start = async () => {
    const [{ Miniflare }, script] = await Promise.all([import("miniflare"), bundleWorker(fixture("store-host.ts"))]);
    const mf = new Miniflare({ modules: true, script, compatibilityDate: COMPATIBILITY_DATE, durableObjects: { STORE: { className: "StoreHost", useSQLite: true } } });
    await mf.ready;
    return mf;
  };
  const locator = createServer((_req, res) => {
    workerd ??= start();
    workerd
      .then((mf) => mf.ready)
      .then((url) => res.end(url.href))
      .catch((error: unknown) => {
        res.writeHead(500);
        res.end(`workerd did not start: ${String(error)}`);
      });
  });
  await new Promise<void>((resolve) => locator.listen(0, "127.0.0.1", resolve));
  project.provide("storeHostUrl", `http://127.0.0.1:${(locator.address() as AddressInfo).port}`);
  return async () => {
    locator.closeAllConnections();
    await new Promise<void>((resolve) => locator.close(() => resolve()));
    if (workerd) await (await workerd).dispose();
  };
}
