import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outgoing webhooks (docs/webhooks.md). `webhooks` belong to an organization; `webhook_deliveries` are the
 * per-webhook queue (a lease on the webhook row lets one instance send one delivery of it at a time) and history (one row per event and webhook, its id is the receiver's idempotency key);
 * `webhook_delivery_attempts` record every HTTP attempt with what was sent and what came back.
 */
export class Webhooks1732240600000 implements MigrationInterface {
  name = 'Webhooks1732240600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        created_by uuid NOT NULL,
        name text NOT NULL,
        description text,
        url text NOT NULL,
        events text[] NOT NULL,
        filters jsonb NOT NULL DEFAULT '{}',
        timeout_seconds integer NOT NULL DEFAULT 30,
        max_retries integer NOT NULL DEFAULT 3,
        retry_interval_seconds integer NOT NULL DEFAULT 60,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'disabled')),
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        secret_rotated_at timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0,
        failing_since timestamptz,
        disabled_at timestamptz,
        disabled_reason text,
        lease_token uuid,
        leased_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_org_idx ON webhooks (organization_id, created_at)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workspace_id uuid,
        event_id uuid,
        event_seq bigint,
        event_type text NOT NULL,
        doc_type text,
        doc_id text,
        triggered_by text,
        kind text NOT NULL CHECK (kind IN ('event', 'test')),
        request_body text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed', 'skipped')),
        queue_order bigint NOT NULL,
        manual boolean NOT NULL DEFAULT false,
        retries_left integer NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        last_duration_ms integer,
        last_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    // One delivery per event and webhook: the enqueueing subscriber is idempotent by event id.
    await q.query(
      `CREATE UNIQUE INDEX webhook_deliveries_event_uq ON webhook_deliveries (webhook_id, event_id) WHERE event_id IS NOT NULL`,
    );
    // The queue: the head of each webhook's unfinished deliveries.
    await q.query(`
      CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (webhook_id, queue_order, created_at)
        WHERE status IN ('pending', 'retrying')`);
    await q.query(
      `CREATE INDEX webhook_deliveries_history_idx ON webhook_deliveries (webhook_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_org_idx ON webhook_deliveries (organization_id, created_at)`,
    );

    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        id bigserial PRIMARY KEY,
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        manual boolean NOT NULL DEFAULT false,
        request_headers jsonb NOT NULL,
        response_status integer,
        response_body text,
        duration_ms integer NOT NULL,
        error text,
        success boolean NOT NULL,
        started_at timestamptz NOT NULL,
        next_retry_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, attempt)`,
    );
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_webhook_idx ON webhook_delivery_attempts (webhook_id, started_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_delivery_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
