import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { returnedRows } from '../../../database/sql-result.js';
import { type DeliveryKind, EVENT_AT, type NewAttempt } from './webhook-delivery.repository.js';

/** A delivery claimed for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  /** When its event was recorded (EVENT_AT): which document using its `docId` the event is of (see whyUnreadable). */
  eventAt: Date;
  leaseToken: string;
  organizationId: string;
  workspaceId: string | null;
  eventType: string;
  docType: string | null;
  docId: string | null;
  kind: DeliveryKind;
  manual: boolean;
  requestBody: string;
  attempt: number;
  retriesLeft: number;
  url: string;
  createdBy: string;
  /** The webhook's credential scopes (WebhookRow.credentialScopes): null reads every event. */
  credentialScopes: string[] | null;
  timeoutSeconds: number;
  retryIntervalSeconds: number;
  secret: string;
  previousSecret: string | null;
}

export interface AttemptOutcome {
  status: 'succeeded' | 'retrying' | 'failed';
  nextAttemptAt: Date | null;
  /** Whether the attempt counts towards the webhook's failure streak (automatic event attempts only). */
  countsAsFailure: boolean;
}

export interface StreakRow {
  status: string;
  consecutiveFailures: number;
  failingSeconds: number | null;
}

const CLAIMED_COLUMNS = `d.id, d.webhook_id AS "webhookId", ${EVENT_AT}, w.lease_token AS "leaseToken", d.organization_id AS "organizationId",
  d.workspace_id AS "workspaceId", d.event_type AS "eventType", d.doc_type AS "docType", d.doc_id AS "docId", d.kind, d.manual,
  d.request_body AS "requestBody", d.attempts AS attempt, d.retries_left AS "retriesLeft", w.url,
  w.created_by AS "createdBy", w.credential_scopes AS "credentialScopes", w.timeout_seconds AS "timeoutSeconds", w.retry_interval_seconds AS "retryIntervalSeconds",
  w.secret, CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS "previousSecret"`;

/**
 * Instances dispatch the outbox concurrently, so a later event can be queued before an earlier one: a queue
 * head (`head` names its alias) of webhook `w` waits while an earlier event of its organization awaits its first
 * dispatch, whose delivery would go before it (per-webhook order). An event whose dispatch already failed once
 * no longer holds the queue back, so one poisoned event cannot stall every webhook of its organization.
 */
function noEarlierEventUnqueued(head: string): string {
  return `NOT EXISTS (
              SELECT 1 FROM outbox o
               WHERE o.dispatched_at IS NULL AND o.attempts = 0 AND o.seq < ${head}.queue_order
                 AND o.organization_id = w.organization_id)`;
}

/**
 * The delivery worker's SQL. A webhook is leased by one instance while one of its deliveries is in flight
 * (`webhooks.lease_token`/`leased_until`), which gives per-webhook ordering and at most one attempt in
 * flight per webhook across instances; the lease expires on its own (timeout + 30 s) if the holder dies.
 */
@Injectable()
export class WebhookQueueRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Claims up to `limit` webhooks whose queue head is due, skipping webhooks another instance holds
   * (SKIP LOCKED, and the lease once committed), and counts the attempt on each head. Paused and disabled
   * webhooks only send manual deliveries (test, redeliver). Must run inside a transaction.
   */
  async claim(limit: number, leaseToken: string): Promise<ClaimedDelivery[]> {
    const leased = returnedRows<{ webhookId: string; deliveryId: string }>(
      await this.tx.manager.query(
        `WITH candidates AS (
         SELECT w.id AS webhook_id, h.id AS delivery_id
           FROM webhooks w
           CROSS JOIN LATERAL (
             SELECT d.id, d.manual, d.next_attempt_at, d.queue_order FROM webhook_deliveries d
              WHERE d.webhook_id = w.id AND d.status IN ('pending', 'retrying')
              ORDER BY d.queue_order, d.created_at
              LIMIT 1) h
          WHERE (w.leased_until IS NULL OR w.leased_until < now())
            AND (w.status = 'active' OR h.manual)
            AND h.next_attempt_at <= now()
            AND ${noEarlierEventUnqueued('h')}
          ORDER BY h.next_attempt_at
          LIMIT $1::int
            FOR UPDATE OF w SKIP LOCKED)
       UPDATE webhooks w
          SET lease_token = $2::uuid, leased_until = now() + make_interval(secs => w.timeout_seconds + 30)
         FROM candidates c
        WHERE w.id = c.webhook_id
       RETURNING w.id AS "webhookId", c.delivery_id AS "deliveryId"`,
        [limit, leaseToken],
      ),
    );
    if (leased.length === 0) {
      return [];
    }
    // The head seen above may have finished meanwhile (read before the lock): the status check is fresh.
    const claimed = returnedRows<ClaimedDelivery>(
      await this.tx.manager.query(
        `UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1, last_attempt_at = now()
         FROM webhooks w
        WHERE d.id = ANY($1::uuid[]) AND d.status IN ('pending', 'retrying') AND w.id = d.webhook_id AND w.lease_token = $2
       RETURNING ${CLAIMED_COLUMNS}`,
        [leased.map((row) => row.deliveryId), leaseToken],
      ),
    );
    const sent = new Set(claimed.map((row) => row.webhookId));
    const idle = leased.filter((row) => !sent.has(row.webhookId)).map((row) => row.webhookId);
    if (idle.length > 0) {
      await this.release(idle, leaseToken);
    }
    return claimed;
  }

  /** Gives leases back (shutdown, nothing to send). */
  async release(webhookIds: string[], leaseToken: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhooks SET lease_token = NULL, leased_until = NULL WHERE id = ANY($1::uuid[]) AND lease_token = $2`,
      [webhookIds, leaseToken],
    );
  }

  /**
   * First statement of an attempt's record transaction: locks the webhook row as the outcome's update would, so a
   * concurrent DELETE of the webhook either waits for the record or has already removed it (false: nothing to record).
   */
  async lockWebhook(webhookId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      `SELECT id FROM webhooks WHERE id = $1 FOR NO KEY UPDATE`,
      [webhookId],
    );
    return rows.length > 0;
  }

  async insertAttempt(attempt: NewAttempt): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, attempt, manual, request_headers, response_status,
                                              response_body, duration_ms, error, success, started_at, next_retry_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        attempt.deliveryId,
        attempt.webhookId,
        attempt.attempt,
        attempt.manual,
        JSON.stringify(attempt.requestHeaders),
        attempt.responseStatus,
        attempt.responseBody,
        attempt.durationMs,
        attempt.error,
        attempt.success,
        attempt.startedAt,
        attempt.nextRetryAt,
      ],
    );
  }

  /**
   * Applies an attempt's outcome to the delivery and the webhook's failure streak, and releases the lease.
   * Does nothing to the delivery when the lease is no longer ours (it expired and another instance took
   * over); returns the streak after a counted failure, for the auto-disable rule.
   */
  async finishAttempt(
    delivery: ClaimedDelivery,
    outcome: AttemptOutcome,
    last: { statusCode: number | null; error: string | null; durationMs: number },
  ): Promise<{ owned: boolean; streak: StreakRow | null }> {
    const success = outcome.status === 'succeeded';
    // One statement ends the lease and moves the streak: a success resets it, a counted failure extends it.
    const owned = returnedRows<StreakRow>(
      await this.tx.manager.query(
        `UPDATE webhooks
            SET lease_token = NULL, leased_until = NULL,
                consecutive_failures = CASE WHEN $3::boolean THEN 0
                                            WHEN $4::boolean THEN consecutive_failures + 1
                                            ELSE consecutive_failures END,
                failing_since = CASE WHEN $3::boolean THEN NULL
                                     WHEN $4::boolean THEN coalesce(failing_since, now())
                                     ELSE failing_since END
          WHERE id = $1 AND lease_token = $2
         RETURNING status, consecutive_failures AS "consecutiveFailures",
                   extract(epoch FROM now() - failing_since)::float AS "failingSeconds"`,
        [delivery.webhookId, delivery.leaseToken, success, outcome.countsAsFailure],
      ),
    );
    if (owned.length === 0) {
      return { owned: false, streak: null };
    }
    await this.tx.manager.query(
      `UPDATE webhook_deliveries
          SET status = $2::text, next_attempt_at = $3::timestamptz, last_status_code = $4::int, last_error = $5::text,
              last_duration_ms = $6::int,
              retries_left = CASE WHEN $2::text = 'retrying' THEN retries_left - 1 ELSE retries_left END,
              finished_at = CASE WHEN $2::text IN ('succeeded', 'failed') THEN now() ELSE NULL END,
              manual = CASE WHEN $2::text = 'retrying' THEN manual ELSE false END
        WHERE id = $1`,
      [delivery.id, outcome.status, outcome.nextAttemptAt, last.statusCode, last.error, last.durationMs],
    );
    return { owned: true, streak: outcome.countsAsFailure ? owned[0] : null };
  }

  /**
   * After finishAttempt (same transaction, the webhook row still locked by it): when the webhook's new queue
   * head is due, lease the webhook again and claim that head, so a busy webhook is drained without a full
   * claim pass per delivery. The order rule is unchanged (only the head, only when due, only if active or manual,
   * never ahead of an earlier event still being dispatched).
   */
  async claimNextOf(webhookId: string, leaseToken: string): Promise<ClaimedDelivery | null> {
    const leased = returnedRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE webhooks w
            SET lease_token = $2::uuid, leased_until = now() + make_interval(secs => w.timeout_seconds + 30)
          WHERE w.id = $1 AND w.lease_token IS NULL
            AND EXISTS (SELECT 1 FROM (SELECT h.manual, h.next_attempt_at, h.queue_order FROM webhook_deliveries h
                                        WHERE h.webhook_id = w.id AND h.status IN ('pending', 'retrying')
                                        ORDER BY h.queue_order, h.created_at LIMIT 1) head
                         WHERE head.next_attempt_at <= now() AND (w.status = 'active' OR head.manual)
                           AND ${noEarlierEventUnqueued('head')})
         RETURNING w.id`,
        [webhookId, leaseToken],
      ),
    );
    if (leased.length === 0) {
      return null;
    }
    const claimed = returnedRows<ClaimedDelivery>(
      await this.tx.manager.query(
        `UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1, last_attempt_at = now()
           FROM webhooks w
          WHERE d.id = (SELECT h.id FROM webhook_deliveries h WHERE h.webhook_id = $1 AND h.status IN ('pending', 'retrying')
                         ORDER BY h.queue_order, h.created_at LIMIT 1)
            AND w.id = d.webhook_id AND w.lease_token = $2
         RETURNING ${CLAIMED_COLUMNS}`,
        [webhookId, leaseToken],
      ),
    );
    if (claimed.length === 0) {
      await this.release([webhookId], leaseToken);
      return null;
    }
    return claimed[0];
  }

  /**
   * A delivery not sent because the webhook's creator, or the credential that set it up, may no longer read its
   * event (`reason` says which). What it would have told is
   * dropped: the body (the column is NOT NULL, so it becomes '') and the document's type and id.
   */
  async skip(delivery: ClaimedDelivery, reason: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhook_deliveries
          SET status = 'skipped', attempts = attempts - 1, next_attempt_at = NULL, last_error = $2, finished_at = now(), manual = false,
              request_body = '', doc_type = NULL, doc_id = NULL
        WHERE id = $1`,
      [delivery.id, reason],
    );
    await this.release([delivery.webhookId], delivery.leaseToken);
  }

  /**
   * Retention: finished deliveries older than `days` are deleted (with their attempts), and deliveries still
   * queued after `days` (a webhook paused or disabled that long) are given up as `failed`.
   */
  async prune(days: number): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), next_attempt_at = NULL,
              last_error = coalesce(last_error || '; ', '') || 'expired: still queued after the retention period'
        WHERE status IN ('pending', 'retrying') AND created_at < now() - make_interval(days => $1::int)`,
      [days],
    );
    await this.tx.manager.query(
      `DELETE FROM webhook_deliveries WHERE finished_at IS NOT NULL AND finished_at < now() - make_interval(days => $1::int)`,
      [days],
    );
  }
}
