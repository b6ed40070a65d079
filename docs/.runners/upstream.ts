// What every runner needs: a local upstream on 127.0.0.1 that the block's `fetch` reaches instead of
// the host it names, and an engine on SQLite in memory given to the block as `tw` (with the other
// free names the runner supplies). Everything is put back and closed when `check` returns or throws.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createTickwork, type Tickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
}

/** How the local upstream answers each request. */
export type Answer = (res: ServerResponse, req: IncomingMessage) => void;

export async function withUpstream<T>(
  answer: Answer,
  freeNames: Record<string, unknown>,
  check: (tw: Tickwork, requests: readonly Seen[]) => Promise<T>,
): Promise<T> {
  const requests: Seen[] = [];
  const upstream = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    answer(res, req);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    return realFetch(new Request(`http://127.0.0.1:${port}${url.pathname}${url.search}`, request));
  };
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {}, handleSignals: false });
  Object.assign(globalThis, { tw, ...freeNames });
  try {
    return await check(tw, requests);
  } finally {
    globalThis.fetch = realFetch;
    await tw.stop();
    upstream.close();
  }
}

/** Polls `probe` every 20 ms until it answers, up to `ms`; then throws what `late` says. */
export async function until<T>(probe: () => Promise<T | undefined>, ms: number, late: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(await late());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
