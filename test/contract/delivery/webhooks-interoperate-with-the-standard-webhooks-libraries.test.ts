import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterEach, describe, expect, it } from "vitest";
import { Logger, functionSink } from "../../../src/core/logger.js";
import { webhookSender, verifyWebhook } from "../../../src/delivery/webhooks.js";

/**
 * tickwork signs and verifies Standard Webhooks: what it sends, the reference library
 * (`standardwebhooks`) and Svix's verify; what they sign, tickwork verifies; and it reads their
 * secrets and tolerance as they do (a secret with or without `whsec_`, whole seconds).
 */
describe("webhooks interoperate with the Standard Webhooks libraries", () => {
  const key = randomBytes(32).toString("base64");
  const secret = `whsec_${key}`;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  /** A real receiver on 127.0.0.1 that keeps each request's raw body and headers. */
  async function receiver() {
    const received: { body: string; headers: IncomingHttpHeaders }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
  }

  const webhookHeaders = (headers: IncomingHttpHeaders) => ({
    "webhook-id": String(headers["webhook-id"]),
    "webhook-timestamp": String(headers["webhook-timestamp"]),
    "webhook-signature": String(headers["webhook-signature"]),
  });

  it("what webhookSender sends verifies with standardwebhooks and svix, with the secret given with or without whsec_", async () => {
    const { url, received } = await receiver();
    const payload = { account: "acct-7", peak: 12.5, note: "ünïcødé ✓" };
    for (const sending of [secret, key]) {
      const send = webhookSender<typeof payload>({ url, secret: sending });
      await send({ id: `msg_${received.length}`, delivery: "hooks", key: null, payload, attempt: 1, createdAt: Date.now() }, { signal: AbortSignal.timeout(10_000), now: Date.now(), logger: new Logger(functionSink(() => {}), Date.now, "error") });
    }
    expect(received).toHaveLength(2);
    for (const { body, headers } of received) {
      for (const reading of [secret, key]) {
        expect(new StandardWebhook(reading).verify(body, webhookHeaders(headers), { jsonParse: true })).toEqual(payload);
        // Svix checks and answers nothing; a mismatch throws.
        expect(() => new SvixWebhook(reading).verify(body, webhookHeaders(headers))).not.toThrow();
      }
    }
  });

  it("what standardwebhooks signs, verifyWebhook verifies, with a tolerance of 0 in the same second, and with the bare base64 secret", async () => {
    const body = JSON.stringify({ type: "invoice.paid", id: "in_1" });
    const signedAt = new Date(Date.parse("2026-03-01T12:00:00Z"));
    const signature = new StandardWebhook(secret).sign("msg_1", signedAt, body);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(signedAt.getTime() / 1000)), "webhook-signature": signature };
    for (const reading of [secret, key]) {
      // 999 ms into the second it was signed in: within a tolerance of 0, as the libraries count.
      await expect(verifyWebhook({ secret: reading, headers, body, now: signedAt.getTime() + 999, tolerance: "0s" })).resolves.toMatchObject({ id: "msg_1", payload: { id: "in_1" } });
    }
    // The next second is outside it, for tickwork as for the library.
    await expect(verifyWebhook({ secret, headers, body, now: signedAt.getTime() + 1_000, tolerance: "0s" })).rejects.toThrow(/more than 0 ms from now/);
  });
});
