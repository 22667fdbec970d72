import { createHmac, randomBytes } from 'node:crypto';

/** Secrets look like Standard Webhooks secrets: `whsec_` followed by the base64 of 32 random bytes. */
export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * `X-Webhook-Signature` (spec 6.1): hex HMAC-SHA256 over `timestamp + "." + rawBody`, keyed with the secret
 * string exactly as shown to the user (prefix included), so a receiver needs no decoding step.
 */
export function quireSignature(secret: string, timestampMs: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampMs}.${rawBody}`).digest('hex')}`;
}

/**
 * `webhook-signature` of Standard Webhooks: `v1,` + base64 HMAC-SHA256 over `id.seconds.body`, keyed with
 * the base64-decoded part after `whsec_` (what the standardwebhooks libraries do with the same string).
 */
export function standardSignature(
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  rawBody: string,
): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return `v1,${createHmac('sha256', key).update(`${deliveryId}.${timestampSeconds}.${rawBody}`).digest('base64')}`;
}

/**
 * The signature headers of one attempt. `secrets` are the secrets currently signing, newest first: one
 * normally, two during the grace period after a rotation.
 * - `X-Webhook-Signature` is always exactly one `sha256=<hex>` (spec 6.1), made with the newest secret, so a
 *   receiver written from the spec compares it as a whole; during the grace period the previous secret's
 *   signature goes in `X-Webhook-Signature-Previous`, for receivers that have not switched secrets yet.
 * - `webhook-signature` (Standard Webhooks) lists one signature per secret, separated by a space, newest first:
 *   the list form its libraries accept.
 */
export function signatureHeaders(
  secrets: string[],
  deliveryId: string,
  timestampMs: number,
  rawBody: string,
): Record<string, string> {
  const seconds = Math.floor(timestampMs / 1000);
  const [newest, previous] = secrets;
  return {
    'x-webhook-signature': quireSignature(newest, timestampMs, rawBody),
    ...(previous ? { 'x-webhook-signature-previous': quireSignature(previous, timestampMs, rawBody) } : {}),
    'x-webhook-timestamp': String(timestampMs),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets
      .map((secret) => standardSignature(secret, deliveryId, seconds, rawBody))
      .join(' '),
  };
}
