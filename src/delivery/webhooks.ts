import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { WebhookResponseError, WebhookVerificationError } from "./errors.js";
import type { DeliveryMessage, Send } from "./options.js";

/**
 * Standard Webhooks (standardwebhooks.com), the scheme Svix and others share: each request carries
 * `webhook-id` (the delivery id, stable across retries, so receivers dedupe), `webhook-timestamp`
 * (seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the
 * secret). Secrets are `whsec_` + base64 key bytes. Built on WebCrypto, so it runs in workerd too.
 */

type HmacKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface WebhookSenderOptions<T> {
  /** The receiver's URL, or one per message. */
  url: string | ((message: DeliveryMessage<T>) => string);
  /** `whsec_` + base64 key bytes (the base64 alone is taken too), at least 16 bytes. */
  secret: string;
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

/** A `send` for `tw.delivery` that POSTs the payload as JSON, signed. Any non-2xx answer is a failure (retried). */
export function webhookSender<T>(options: WebhookSenderOptions<T>): Send<T> {
  // The secret is checked here, synchronously: a bad one is the caller's error now, not a rejected
  // promise that nobody awaits until the first send (Node ends the process on an unhandled rejection).
  const key = importKey(secretBytes(options.secret));
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return async (message, ctx) => {
    const url = typeof options.url === "function" ? options.url(message) : options.url;
    const body = JSON.stringify(message.payload);
    const timestamp = Math.floor(ctx.now / 1000);
    const signature = await sign(await key, message.id, timestamp, body);
    const response = await doFetch(url, {
      method: "POST",
      body,
      signal: ctx.signal,
      headers: {
        "content-type": "application/json",
        ...options.headers,
        "webhook-id": message.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`,
      },
    });
    // The body is read so the connection can be reused; its content is not the sender's business.
    await response.arrayBuffer().catch(() => undefined);
    if (!response.ok) throw new WebhookResponseError(response.status, url);
  };
}

export interface VerifyOptions {
  secret: string;
  /** The request's headers (a Headers object or a plain record). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The raw body, exactly as received. */
  body: string;
  /** Epoch ms; default now. */
  now?: number;
  /** How far the timestamp may be from now, either way (replay protection); default 5m. */
  tolerance?: Duration;
}

/**
 * Checks a webhook request and returns its id, timestamp and parsed JSON body; throws
 * `WebhookVerificationError` when anything does not check out. Dedupe on the returned id.
 */
export async function verifyWebhook(options: VerifyOptions): Promise<{ id: string; timestamp: number; payload: unknown }> {
  const header = (name: string): string => {
    const text = options.headers instanceof Headers ? options.headers.get(name) : recordHeader(options.headers, name);
    if (!text) throw new WebhookVerificationError(`missing ${name} header`);
    return text;
  };
  const id = header("webhook-id");
  const stamp = header("webhook-timestamp");
  const signatures = header("webhook-signature");
  if (!/^\d{1,12}$/.test(stamp)) throw new WebhookVerificationError(`webhook-timestamp must be whole seconds, got ${describe(stamp)}`);
  const timestamp = Number(stamp);
  const tolerance = toMs(options.tolerance ?? "5m");
  const now = options.now ?? Date.now();
  // In whole seconds, as the timestamp is and as the Standard Webhooks libraries compare: a signature
  // made in this second passes a tolerance of 0.
  if (Math.abs(Math.floor(now / 1000) - timestamp) * 1000 > tolerance) throw new WebhookVerificationError(`webhook-timestamp ${timestamp} is more than ${tolerance} ms from now`);
  const expected = await sign(await importKey(secretBytes(options.secret)), id, timestamp, options.body);
  // A header may carry several signatures (secret rotation); any v1 match is enough.
  const match = signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2);
    return version === "v1" && value !== undefined && constantTimeEqual(value, expected);
  });
  if (!match) throw new WebhookVerificationError("no webhook-signature matches");
  let payload: unknown;
  try {
    payload = JSON.parse(options.body);
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
  return { id, timestamp, payload };
}

/**
 * A header from a plain record, whatever the case of its name (header names are case-insensitive,
 * and only node lowercases them): `Webhook-Id` is `webhook-id`. Two spellings with different values
 * are refused rather than one picked, since a signature checked against one value could then vouch
 * for the other.
 */
function recordHeader(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const values = new Set<string>();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const text = Array.isArray(value) ? value[0] : value;
    if (text) values.add(text);
  }
  if (values.size > 1) throw new WebhookVerificationError(`the ${name} header is given more than once, with different values`);
  return values.values().next().value;
}

/**
 * The key bytes of a secret: base64, after the `whsec_` prefix when it has one (the Standard Webhooks
 * libraries take it either way, and a receiver may have stored it without).
 */
function secretBytes(secret: string): Uint8Array {
  if (typeof secret !== "string" || secret === "") throw new InvalidInputError(`webhook secret must be "whsec_" + base64 bytes (or the base64 alone), got ${describe(secret)}`);
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  } catch {
    throw new InvalidInputError("webhook secret: not base64 (after the whsec_ prefix, if any)");
  }
  if (bytes.length < 16) throw new InvalidInputError(`webhook secret must hold at least 16 bytes, got ${bytes.length}`);
  return bytes;
}

function importKey(bytes: Uint8Array): Promise<HmacKey> {
  return globalThis.crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

async function sign(key: HmacKey, id: string, timestamp: number, body: string): Promise<string> {
  const mac = await globalThis.crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return btoa(String.fromCharCode(...new Uint8Array(mac)));
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
