import { WebhookResponseError } from "../delivery/errors.js";

/**
 * POSTs `body` as JSON; any answer but 2xx throws `WebhookResponseError`, so the delivery retries
 * the notification. The error names the URL's origin only: the path of a Slack or Discord webhook
 * is its credential, and errors are stored with the item and logged.
 */
export async function postJson(url: string, body: unknown, signal: AbortSignal): Promise<void> {
  const response = await globalThis.fetch(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" }, signal });
  // Read so the connection can be reused; what the endpoint says is not the sender's business.
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new WebhookResponseError(response.status, `${new URL(url).origin}/…`);
}
