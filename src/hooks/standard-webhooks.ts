/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/, "Verifying webhook
 * authenticity"): `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>` entries over
 * `${webhook-id}.${webhook-timestamp}.${body}`; the key is the base64-decoded part of the
 * `whsec_<base64>` secret. Several signatures allow secret rotation.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError, UnauthorizedError } from "../errors.js";

export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/**
 * The shortest HMAC key a signature is checked with. A `whsec_` secret whose base64 decodes to
 * fewer bytes authenticates nobody: `whsec_A` decodes to none at all (an HMAC anybody can compute),
 * and one to three bytes fall to an online guess with no delivery ever seen (at most 2^24 tries;
 * 401s do not spend the source's intake limit). Deliveries to such a source are refused
 * (WeakWebhookSecretError) until an operator sets a proper secret. This is a floor against keys
 * that are no keys, not a recommendation: the specification asks for 24 to 64 random bytes.
 */
export const MIN_KEY_BYTES = 4;

export interface WebhookHeaders {
  id?: string;
  timestamp?: string;
  signature?: string;
}

/** The HMAC key of a `whsec_<base64>` secret (a secret without the prefix is read as base64 too). */
export function webhookKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  return Buffer.from(encoded, "base64");
}

function hmac(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest();
}

/** The `webhook-signature` value for a payload (for senders, tests and docs). */
export function signWebhook(
  secret: string,
  id: string,
  timestamp: number | string,
  body: Buffer | string,
): string {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return `v1,${hmac(webhookKey(secret), id, String(timestamp), bytes).toString("base64")}`;
}

export class WebhookTimestampError extends AppError {
  constructor(message: string) {
    super(message, { status: 401, code: "timestamp_out_of_tolerance" });
  }
}

/**
 * The source's secret is too short to authenticate a delivery (MIN_KEY_BYTES): a configuration
 * problem an operator must fix (500, logged at error), never a delivery taken for signed.
 */
export class WeakWebhookSecretError extends AppError {
  constructor(keyBytes: number) {
    super(
      `the source's webhook signing secret decodes to ${keyBytes} bytes, fewer than ${MIN_KEY_BYTES}: deliveries are refused until it is replaced`,
      { status: 500, code: "webhook_secret_too_short" },
    );
  }
}

/**
 * Whether a `webhook-timestamp` (unix seconds) is at most `toleranceSeconds` away from now, counted
 * in whole seconds as the specification's reference libraries count it (now floored to the second):
 * a timestamp exactly 300 s old is inside the default tolerance whatever the milliseconds of now.
 */
export function withinTolerance(timestamp: number, nowMs: number, toleranceSeconds: number): boolean {
  return Math.abs(Math.floor(nowMs / 1000) - timestamp) <= toleranceSeconds;
}

/**
 * Verifies a delivery; throws WeakWebhookSecretError (a secret too short to authenticate anything),
 * UnauthorizedError (missing headers, forged signature) or WebhookTimestampError (timestamp
 * unreadable or outside the tolerance). `nowMs` is injected.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: Buffer,
  nowMs: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): void {
  const key = webhookKey(secret);
  if (key.length < MIN_KEY_BYTES) throw new WeakWebhookSecretError(key.length);
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) {
    throw new UnauthorizedError("webhook-id, webhook-timestamp and webhook-signature headers are required");
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookTimestampError("webhook-timestamp is not unix seconds");
  if (!withinTolerance(Number(timestamp), nowMs, toleranceSeconds)) {
    throw new WebhookTimestampError(
      `webhook-timestamp is more than ${toleranceSeconds} seconds away from now`,
    );
  }
  const expected = hmac(key, id, timestamp, body);
  let ok = false;
  for (const entry of signature.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const given = Buffer.from(entry.slice(comma + 1), "base64");
    // No early exit: every v1 entry is compared.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  if (!ok) throw new UnauthorizedError("no valid webhook signature");
}
