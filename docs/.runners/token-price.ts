// The HTTP client page's first example against a local upstream that answers a token's price with
// Tenero's rate-limit headers: the client must send exactly one request, carrying the API key.
import { withUpstream, type Answer } from "./upstream.ts";

const KEY = "docs-key";
const TOKEN = "So11111111111111111111111111111111111111112";

export default function tokenPrice(load: () => Promise<unknown>): Promise<string> {
  const answer: Answer = (res) =>
    res.writeHead(200, { "content-type": "application/json", "x-ratelimit-minute-remaining": "59", "x-ratelimit-month-remaining": "9999" }).end(JSON.stringify({ price: 1.25 }));
  return withUpstream(answer, { key: KEY, id: TOKEN }, async (_tw, requests) => {
    await load();
    const [only, ...more] = requests;
    if (!only || more.length) throw new Error(`expected one request upstream, got ${requests.length}`);
    if (only.method !== "GET" || only.url !== `/v1/tokens/${TOKEN}/price`) throw new Error(`expected GET /v1/tokens/${TOKEN}/price, got ${only.method} ${only.url}`);
    if (only.headers["x-api-key"] !== KEY) throw new Error(`the request did not carry the API key in x-api-key (got ${String(only.headers["x-api-key"])})`);
    return `GET ${only.url} with its x-api-key answered, and the block ran to its end`;
  });
}
