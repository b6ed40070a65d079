import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach } from "vitest";

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

/** What the receiver answers a request with: a status, or "hang" (no answer until the test ends). */
export type Answer = number | "hang";

export interface Receiver {
  /** A URL on the receiver; each path records its own requests. */
  url(path: string): string;
  /** Every request so far, in arrival order. */
  readonly requests: Received[];
  /** The requests to one path. */
  at(path: string): Received[];
  /** Answers for the next requests to `path`, in order; 200 (204 on /discord paths) once they run out. */
  answer(path: string, ...answers: Answer[]): void;
}

/**
 * A real HTTP server on 127.0.0.1 for each test, standing in for Slack, Discord and webhook
 * endpoints: it records each request's headers and raw body and answers as the test says.
 */
export function httpReceiver(): Receiver {
  let server: ReturnType<typeof createServer>;
  let base = "";
  const requests: Received[] = [];
  const answers = new Map<string, Answer[]>();
  const hanging: ServerResponse[] = [];

  beforeEach(async () => {
    requests.length = 0;
    answers.clear();
    server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        const path = req.url ?? "";
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        requests.push({ path, headers: req.headers, body, json });
        const answer = answers.get(path)?.shift() ?? (path.startsWith("/discord") ? 204 : 200);
        if (answer === "hang") hanging.push(res);
        else res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "no");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const res of hanging.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  return {
    url: (path) => `${base}${path}`,
    requests,
    at: (path) => requests.filter((r) => r.path === path),
    answer: (path, ...list) => answers.set(path, [...(answers.get(path) ?? []), ...list]),
  };
}
