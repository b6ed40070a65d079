import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { WebhookVerificationError } from "../../../src/delivery/errors.js";
import { verifyWebhook, webhookSender } from "../../../src/delivery/webhooks.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/** The Standard Webhooks signature, computed here without tickwork: base64 HMAC-SHA256 of `id.timestamp.body`. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
}

describe.each(allStoreCases())("Standard Webhooks delivery ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);
  let server: Server;
  let url: string;
  let received: Received[];
  /** The status the receiver answers with, one per request; 200 once they run out. */
  let answers: number[];

  beforeEach(async () => {
    received = [];
    answers = [];
    server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        received.push({ headers: req.headers, body, path: req.url ?? "" });
        res.writeHead(answers.shift() ?? 200, { "content-type": "text/plain" }).end("thanks");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("signs each request so verifyWebhook accepts it, with webhook-id the delivery id and a signature HMAC computes independently", async () => {
    const { tw, clock } = await engines.first();
    const secret = newSecret();
    const delivered: string[] = [];
    const hooks = tw.delivery<{ account: string; peak: number }>("hooks", {
      send: webhookSender({ url, secret, headers: { "x-tenant": "acme" } }),
      onDelivered: (m) => void delivered.push(m.id),
    });
    await hooks.emit([{ key: "daily:a-1", payload: { account: "a-1", peak: 1234.5 } }]);
    await tw.tick();

    expect(received).toHaveLength(1);
    const [request] = received;
    const { headers, body } = request!;
    expect(request!.path).toBe("/hooks");
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["x-tenant"]).toBe("acme");
    expect(JSON.parse(body)).toEqual({ account: "a-1", peak: 1234.5 });
    expect(headers["webhook-id"]).toBe(delivered[0]);
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now() / 1000)));
    const signature = headers["webhook-signature"] as string;
    expect(signature).toBe(`v1,${expectedSignature(secret, delivered[0]!, headers["webhook-timestamp"] as string, body)}`);

    const verified = await verifyWebhook({ secret, headers, body, now: clock.now() });
    expect(verified).toEqual({ id: delivered[0], timestamp: Math.floor(clock.now() / 1000), payload: { account: "a-1", peak: 1234.5 } });
    // A Headers object works as well as node's header record; any of several signatures may match (secret rotation).
    const rotated = new Headers({ ...(headers as Record<string, string>), "webhook-signature": `v1,${expectedSignature(newSecret(), "x", "1", "y")} ${signature}` });
    expect((await verifyWebhook({ secret, headers: rotated, body, now: clock.now() })).id).toBe(delivered[0]);
  });

  it("verifyWebhook refuses a tampered body, a wrong secret, a timestamp outside the tolerance and missing headers", async () => {
    const { tw, clock } = await engines.first();
    const secret = newSecret();
    const hooks = tw.delivery<{ n: number }>("hooks", { send: webhookSender({ url, secret }) });
    await hooks.emit([{ payload: { n: 1 } }]);
    await tw.tick();
    const { headers, body } = received[0]!;
    const now = clock.now();
    const sentAt = Number(headers["webhook-timestamp"]) * 1000;
    const refused = (options: Partial<Parameters<typeof verifyWebhook>[0]>) =>
      expect(verifyWebhook({ secret, headers, body, now, ...options })).rejects.toBeInstanceOf(WebhookVerificationError);

    await refused({ body: body.replace("1", "2") });
    await expect(verifyWebhook({ secret, headers, body: `${body} `, now })).rejects.toThrow(/no webhook-signature matches/);
    await refused({ secret: newSecret() });
    await expect(verifyWebhook({ secret, headers, body, now: sentAt + 5 * MINUTE + 1_000 })).rejects.toThrow(/more than 300000 ms from now/);
    await refused({ now: sentAt - 5 * MINUTE - 1_000 });
    // Inside the default 5 minutes, and a tolerance of one's own.
    await expect(verifyWebhook({ secret, headers, body, now: sentAt + 5 * MINUTE })).resolves.toMatchObject({ payload: { n: 1 } });
    await refused({ now: sentAt + 61_000, tolerance: "1m" });
    for (const missing of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const partial = { ...headers };
      delete partial[missing];
      await expect(verifyWebhook({ secret, headers: partial, body, now }), missing).rejects.toThrow(new RegExp(`missing ${missing} header`));
    }
    await refused({ headers: { ...headers, "webhook-id": "another-id" } });
    await refused({ headers: { ...headers, "webhook-timestamp": "soon" } });
    await refused({ headers: { ...headers, "webhook-signature": (headers["webhook-signature"] as string).replace("v1,", "v2,") } });
  });

  it("refuses a secret that is not base64 (after whsec_, if any) of at least 16 bytes, when the sender is made and when verifying", async () => {
    for (const secret of ["", "abc", "whsec_", "whsec_!!!not base64", `whsec_${Buffer.alloc(8).toString("base64")}`, 42]) {
      expect(() => webhookSender({ url, secret: secret as string }), String(secret)).toThrow(InvalidInputError);
      await expect(verifyWebhook({ secret: secret as string, headers: { "webhook-id": "i", "webhook-timestamp": "1", "webhook-signature": "v1,x" }, body: "{}", now: 1_000 })).rejects.toThrow(InvalidInputError);
    }
    expect(() => webhookSender({ url, secret: "sk_live_123" })).toThrow(/webhook secret: not base64/);
    expect(() => webhookSender({ url, secret: `whsec_${Buffer.alloc(8).toString("base64")}` })).toThrow(/at least 16 bytes, got 8/);
  });

  it("counts a non-2xx answer as a failed attempt and keeps the same webhook-id on every retry", async () => {
    const { tw, clock } = await engines.first();
    const secret = newSecret();
    const delivered: { id: string; attempt: number }[] = [];
    const hooks = tw.delivery<{ n: number }>("hooks", {
      send: webhookSender({ url, secret }),
      onDelivered: (m) => void delivered.push({ id: m.id, attempt: m.attempt }),
    });
    answers = [503, 500];
    const t0 = clock.now();
    await hooks.emit([{ key: "k", payload: { n: 7 } }]);
    await tw.tick();
    const [first] = await hooks.outstanding();
    expect(first!.lastError).toMatch(/answered 503/);
    await clock.set(t0 + MINUTE);
    await tw.tick();
    expect((await hooks.outstanding())[0]!.lastError).toMatch(/answered 500/);
    await clock.set(t0 + 6 * MINUTE);
    await tw.tick();

    expect(received).toHaveLength(3);
    expect(delivered).toEqual([{ id: first!.id, attempt: 3 }]);
    expect(received.map((r) => r.headers["webhook-id"])).toEqual([first!.id, first!.id, first!.id]);
    // Each attempt is signed afresh at its own time, and each verifies at that time.
    expect(received.map((r) => Number(r.headers["webhook-timestamp"]) * 1000 - t0)).toEqual([0, MINUTE, 6 * MINUTE]);
    for (const [i, r] of received.entries()) {
      const at = t0 + [0, MINUTE, 6 * MINUTE][i]!;
      expect((await verifyWebhook({ secret, headers: r.headers, body: r.body, now: at })).id).toBe(first!.id);
    }
    expect(await hooks.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
  });
});
