import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type DeliveryKind = 'event' | 'test';

export interface NewDelivery {
  id: string;
  webhookId: string;
  organizationId: string;
  workspaceId: string | null;
  eventId: string | null;
  eventSeq: string | null;
  eventType: string;
  docType: string | null;
  docId: string | null;
  triggeredBy: string | null;
  kind: DeliveryKind;
  requestBody: string;
  retriesLeft: number;
  /** Recorded as `skipped` with this reason instead of queued (filters that could not be evaluated). */
  skippedReason?: string | null;
}

export interface DeliveryRow {
  id: string;
  webhookId: string;
  organizationId: string;
  workspaceId: string | null;
  eventType: string;
  docType: string | null;
  docId: string | null;
  triggeredBy: string | null;
  kind: DeliveryKind;
  requestBody: string;
  status: DeliveryStatus;
  manual: boolean;
  retriesLeft: number;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  lastAttemptAt: Date | null;
  createdAt: Date;
  /** When its event was recorded (EVENT_AT): which document using its `docId` the event is of (creatorMayRead). */
  eventAt: Date;
  finishedAt: Date | null;
}

export interface AttemptRow {
  attempt: number;
  manual: boolean;
  requestHeaders: Record<string, string>;
  responseStatus: number | null;
  responseBody: string | null;
  durationMs: number;
  error: string | null;
  success: boolean;
  startedAt: Date;
  nextRetryAt: Date | null;
}

export interface NewAttempt extends Omit<AttemptRow, 'nextRetryAt'> {
  deliveryId: string;
  webhookId: string;
  nextRetryAt: Date | null;
}

export interface DeliveryStatsRow {
  pending: number;
  retrying: number;
  succeeded: number;
  failed: number;
  skipped: number;
  attempts: number;
  successfulAttempts: number;
  failedAttempts: number;
  p50: number | null;
  p95: number | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
}

/**
 * The time of a delivery's event, as the outbox recorded it (`occurred_at`, the event's `timestamp`), not the
 * delivery's `created_at`: the dispatch transaction that queued it may have begun before the event's document was
 * created (docs/webhooks.md, "What a webhook may see"). A test delivery has no event: its own creation.
 */
export const EVENT_AT = `coalesce((SELECT o.occurred_at FROM outbox o WHERE o.id = d.event_id), d.created_at) AS "eventAt"`;

export const DELIVERY_COLUMNS = `d.id, d.webhook_id AS "webhookId", d.organization_id AS "organizationId", d.workspace_id AS "workspaceId",
  d.event_type AS "eventType", d.doc_type AS "docType", d.doc_id AS "docId", d.triggered_by AS "triggeredBy", d.kind,
  d.request_body AS "requestBody", d.status, d.manual, d.retries_left AS "retriesLeft", d.attempts,
  d.next_attempt_at AS "nextAttemptAt", d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
  d.last_duration_ms AS "lastDurationMs", d.last_attempt_at AS "lastAttemptAt", d.created_at AS "createdAt",
  d.finished_at AS "finishedAt", ${EVENT_AT}`;

/** Delivery history and queue reads of one webhook (the worker's claim and outcome SQL is in WebhookQueueRepository). */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Queues deliveries; one per (webhook, event): a replayed event enqueues nothing twice. Event deliveries
   * queue in event order (`queue_order` = outbox seq); test deliveries go to the front (0).
   */
  async enqueue(deliveries: NewDelivery[]): Promise<number> {
    if (deliveries.length === 0) {
      return 0;
    }
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      `INSERT INTO webhook_deliveries (id, webhook_id, organization_id, workspace_id, event_id, event_seq, event_type, doc_type,
                                       doc_id, triggered_by, kind, request_body, status, queue_order, manual, retries_left,
                                       next_attempt_at, last_error, finished_at)
       SELECT x.id, x."webhookId", x."organizationId", x."workspaceId", x."eventId", x."eventSeq", x."eventType", x."docType",
              x."docId", x."triggeredBy", x.kind, x."requestBody",
              CASE WHEN x."skippedReason" IS NULL THEN 'pending' ELSE 'skipped' END, coalesce(x."eventSeq", 0), x.kind = 'test',
              x."retriesLeft", CASE WHEN x."skippedReason" IS NULL THEN now() END, x."skippedReason",
              CASE WHEN x."skippedReason" IS NOT NULL THEN now() END
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, "webhookId" uuid, "organizationId" uuid, "workspaceId" uuid,
              "eventId" uuid, "eventSeq" bigint, "eventType" text, "docType" text, "docId" text, "triggeredBy" text,
              kind text, "requestBody" text, "retriesLeft" integer, "skippedReason" text)
       ON CONFLICT (webhook_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [JSON.stringify(deliveries)],
    );
    return rows.length;
  }

  async find(webhookId: string, deliveryId: string, lock = false): Promise<DeliveryRow | null> {
    const rows = await this.tx.manager.query<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.webhook_id = $1 AND d.id = $2${lock ? ' FOR UPDATE' : ''}`,
      [webhookId, deliveryId],
    );
    return rows[0] ?? null;
  }

  /** Newest first; optionally only one status and/or one event type. */
  async list(
    webhookId: string,
    filter: { status?: DeliveryStatus; event?: string },
    limit: number,
    offset: number,
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const where = `d.webhook_id = $1 AND ($2::text IS NULL OR d.status = $2) AND ($3::text IS NULL OR d.event_type = $3)`;
    const params = [webhookId, filter.status ?? null, filter.event ?? null];
    const rows = await this.tx.manager.query<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE ${where} ORDER BY d.created_at DESC, d.id DESC LIMIT $4 OFFSET $5`,
      [...params, limit, offset],
    );
    const counted = await this.tx.manager.query<Array<{ total: string }>>(
      `SELECT count(*) AS total FROM webhook_deliveries d WHERE ${where}`,
      params,
    );
    return { rows, total: Number(counted[0].total) };
  }

  async attempts(deliveryId: string): Promise<AttemptRow[]> {
    return this.tx.manager.query<AttemptRow[]>(
      `SELECT attempt, manual, request_headers AS "requestHeaders", response_status AS "responseStatus",
              response_body AS "responseBody", duration_ms AS "durationMs", error, success, started_at AS "startedAt",
              next_retry_at AS "nextRetryAt"
         FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt DESC, id DESC`,
      [deliveryId],
    );
  }

  /**
   * Resend: the same delivery (same id and body) gets one more attempt. A finished delivery goes back to the
   * front of the queue as a manual attempt without automatic retries; a queued one is just made due now.
   */
  async requeue(deliveryId: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhook_deliveries
          SET next_attempt_at = now(),
              status = CASE WHEN status IN ('pending', 'retrying') THEN status ELSE 'pending' END,
              manual = CASE WHEN status IN ('pending', 'retrying') THEN manual ELSE true END,
              queue_order = CASE WHEN status IN ('pending', 'retrying') THEN queue_order ELSE 0 END,
              retries_left = CASE WHEN status IN ('pending', 'retrying') THEN retries_left ELSE 0 END,
              finished_at = CASE WHEN status IN ('pending', 'retrying') THEN finished_at ELSE NULL END
        WHERE id = $1`,
      [deliveryId],
    );
  }

  /**
   * A PUT changed maxRetries: the queued automatic deliveries of the webhook get the difference added to the retries
   * they have left (never below none), so the retry budget follows the webhook's current value as timeout and
   * retryInterval do. Manual attempts (redeliveries) and tests are never retried and keep none.
   */
  async shiftRetriesLeft(webhookId: string, by: number): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhook_deliveries SET retries_left = GREATEST(0, retries_left + $2)
        WHERE webhook_id = $1 AND status IN ('pending', 'retrying') AND kind = 'event' AND NOT manual`,
      [webhookId, by],
    );
  }

  /** On resume: what waits for a retry is due now instead of at the back-off time it had. */
  async makeQueueDue(webhookId: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now()
        WHERE webhook_id = $1 AND status IN ('pending', 'retrying') AND next_attempt_at > now()`,
      [webhookId],
    );
  }

  /** Counts by outcome, success rate inputs, latency percentiles and last outcomes, all computed in SQL. */
  async stats(webhookId: string): Promise<DeliveryStatsRow> {
    const rows = await this.tx.manager.query<DeliveryStatsRow[]>(
      `SELECT s.*, a.*
         FROM (SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
                      count(*) FILTER (WHERE status = 'retrying')::int AS retrying,
                      count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
                      count(*) FILTER (WHERE status = 'failed')::int AS failed,
                      count(*) FILTER (WHERE status = 'skipped')::int AS skipped
                 FROM webhook_deliveries WHERE webhook_id = $1) s,
              (SELECT count(*)::int AS attempts,
                      count(*) FILTER (WHERE success)::int AS "successfulAttempts",
                      count(*) FILTER (WHERE NOT success)::int AS "failedAttempts",
                      percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                      percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95,
                      max(started_at) FILTER (WHERE success) AS "lastSuccessAt",
                      max(started_at) FILTER (WHERE NOT success) AS "lastFailureAt"
                 FROM webhook_delivery_attempts WHERE webhook_id = $1) a`,
      [webhookId],
    );
    return rows[0];
  }
}
