// tickwork/delivery: batched callbacks with a per-tick budget, persisted retries, dead letters and
// replay (`tw.delivery`), and Standard Webhooks signing and verification.
export { Delivery, type EmitResult, type EmitFromResult, type DeliveryPass, type DeliveryStatus } from "./delivery.js";
export type { DeliveryOptions, DeliveryItem, DeliveryMessage, SendContext, Send } from "./options.js";
export { keyset } from "./keyset.js";
export { webhookSender, verifyWebhook, type WebhookSenderOptions, type VerifyOptions } from "./webhooks.js";
export { WebhookVerificationError, WebhookResponseError } from "./errors.js";
