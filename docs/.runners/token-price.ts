// The HTTP client page's first example against a local upstream that answers a token's price with
// Tenero's rate-limit headers: the client sends the API key, parses the body with the schema and
// reads the headers into `rateLimit`; the upstream must have seen exactly that request.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createTickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";

const KEY = "docs-key";
const TOKEN = "So11111111111111111111111111111111111111112";

export default async function tokenPrice(load: () => Promise<unknown>): Promise<string> {
  const requests: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const upstream = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    res.writeHead(200, { "content-type": "application/json", "x-ratelimit-minute-remaining": "59", "x-ratelimit-month-remaining": "9999" }).end(JSON.stringify({ price: 1.25 }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  const realFetch = globalThis.fetch;
  // The page calls https://api.tenero.io: its requests go to the local upstream instead.
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    return realFetch(new Request(`http://127.0.0.1:${port}${url.pathname}${url.search}`, request));
  };
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {}, handleSignals: false });
  Object.assign(globalThis, { tw, key: KEY, id: TOKEN });
  try {
    await load();
    const [only, ...more] = requests;
    if (!only || more.length) throw new Error(`expected one request upstream, got ${requests.length}`);
    if (only.method !== "GET" || only.url !== `/v1/tokens/${TOKEN}/price`) throw new Error(`expected GET /v1/tokens/${TOKEN}/price, got ${only.method} ${only.url}`);
    if (only.headers["x-api-key"] !== KEY) throw new Error(`the request did not carry the API key in x-api-key (got ${String(only.headers["x-api-key"])})`);
    return `GET ${only.url} with its x-api-key answered, and the block ran to its end`;
  } finally {
    globalThis.fetch = realFetch;
    await tw.stop();
    upstream.close();
  }
}
