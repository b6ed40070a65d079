import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { WebhookVerificationError } from "../../../src/delivery/errors.js";
import { verifyWebhook } from "../../../src/delivery/webhooks.js";

/**
 * HTTP header names are case-insensitive (RFC 9110). node's `IncomingMessage.headers` lowercases
 * them, but a plain object built by hand, by another framework or from a queue message may not: a
 * signed request must verify whatever case its header names arrive in.
 */
describe("verifyWebhook with a plain-object header map", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const id = "msg_2b9f";
  const now = Date.parse("2026-01-01T00:00:00Z");
  const timestamp = String(Math.floor(now / 1000));
  const body = JSON.stringify({ account: "a-1", peak: 12.5 });
  const signature = `v1,${createHmac("sha256", Buffer.from(secret.slice(6), "base64")).update(`${id}.${timestamp}.${body}`).digest("base64")}`;

  it("finds Webhook-Id, WEBHOOK-SIGNATURE and webhook-Timestamp whatever their case", async () => {
    for (const headers of [
      { "Webhook-Id": id, "Webhook-Timestamp": timestamp, "Webhook-Signature": signature },
      { "WEBHOOK-ID": id, "webhook-Timestamp": timestamp, "WEBHOOK-SIGNATURE": signature },
      { "webhook-id": [id], "webhook-timestamp": timestamp, "webhook-signature": signature, "Content-Type": "application/json" },
    ]) {
      await expect(verifyWebhook({ secret, headers, body, now }), JSON.stringify(Object.keys(headers))).resolves.toEqual({ id, timestamp: Number(timestamp), payload: { account: "a-1", peak: 12.5 } });
    }
  });

  it("still refuses a missing header, and two spellings of one header that disagree", async () => {
    await expect(verifyWebhook({ secret, headers: { "Webhook-Id": id, "Webhook-Timestamp": timestamp }, body, now })).rejects.toThrow(/missing webhook-signature header/);
    await expect(
      verifyWebhook({ secret, headers: { "Webhook-Id": id, "webhook-id": "msg_other", "Webhook-Timestamp": timestamp, "Webhook-Signature": signature }, body, now }),
    ).rejects.toThrow(WebhookVerificationError);
  });
});
