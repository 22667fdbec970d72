import { readBool, readInt } from './env.js';

type Env = Record<string, string | undefined>;

/** Outgoing webhooks (docs/webhooks.md). */
export interface WebhooksConfig {
  /**
   * Allow destinations on loopback, private, link-local and other non-public addresses. Unsafe in
   * production (server-side request forgery); meant for local development and tests, where it is the default:
   * off only when NODE_ENV=production (the image), on otherwise (`npm start`, the tests), so a receiver on the
   * developer's machine works out of the box.
   */
  allowPrivate: boolean;
  /** How often each instance looks for due deliveries (new deliveries also wake it right after commit). */
  pollIntervalMs: number;
  /** Deliveries one instance sends at the same time (at most one per webhook). */
  concurrency: number;
  /** Consecutive failed attempts after which a webhook is disabled and its owner told. */
  disableAfterFailures: number;
  /** A webhook failing without a single success for this long is disabled as well. */
  disableAfterSeconds: number;
  /** How long the previous secret keeps signing after regenerate-secret. */
  secretGraceSeconds: number;
  /** Finished delivery records, and deliveries still queued (paused or disabled webhooks), are kept this long. */
  retentionDays: number;
}

export function loadWebhooksConfig(env: Env, nodeEnv: string): WebhooksConfig {
  return {
    allowPrivate: readBool(env, 'WEBHOOK_ALLOW_PRIVATE', nodeEnv !== 'production'),
    pollIntervalMs: readInt(env, 'WEBHOOK_POLL_INTERVAL_MS', 1000, 20, 600_000),
    concurrency: readInt(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1000),
    disableAfterFailures: readInt(env, 'WEBHOOK_DISABLE_AFTER_FAILURES', 50, 1, 100_000),
    disableAfterSeconds: readInt(env, 'WEBHOOK_DISABLE_AFTER_SECONDS', 3 * 86_400, 1, 365 * 86_400),
    secretGraceSeconds: readInt(env, 'WEBHOOK_SECRET_GRACE_SECONDS', 86_400, 0, 30 * 86_400),
    retentionDays: readInt(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
  };
}
