import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Supply-chain propagation and connectors (docs/supply-chain.md, "Propagation" and "Connectors"):
 * - `sync_propagation_jobs`: the ledger of (binding, catalog revision) applications; unique on that pair, claimed and
 *   marked applied in the transaction that writes the order book (exactly once); `due_at` holds batch windows.
 * - `sync_row_links`: which target row a source row maps to, per binding or connector, and what the sync last wrote
 *   (to tell local edits apart for conflict resolution).
 * - `sync_revision_origins`: revisions written by a binding or connector (loop prevention, audit).
 * - `sync_currency_rates`: an organization's exchange-rate table (currency conversions never ask the network).
 * - `connector_runs`: every connector run (realtime runs are unique per source revision and direction).
 * - `connector_schedules`: the next due time of each scheduled connector.
 */
export class SupplyChainSync1732240920000 implements MigrationInterface {
  name = 'SupplyChainSync1732240920000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sync_propagation_jobs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        binding_id uuid NOT NULL REFERENCES orderbook_bindings (id) ON DELETE CASCADE,
        orderbook_id uuid NOT NULL,
        catalog_document_id uuid NOT NULL,
        catalog_revision_id uuid NOT NULL,
        catalog_revision_version bigint NOT NULL,
        revision_created_at timestamptz NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'skipped', 'failed')),
        due_at timestamptz NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_error text,
        result jsonb,
        applied_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sync_propagation_jobs_once UNIQUE (binding_id, catalog_revision_id)
      )`);
    await q.query(
      `CREATE INDEX sync_propagation_jobs_org_idx ON sync_propagation_jobs (organization_id, binding_id, created_at)`,
    );
    await q.query(
      `CREATE INDEX sync_propagation_jobs_due_idx ON sync_propagation_jobs (due_at) WHERE status = 'pending'`,
    );

    await q.query(`
      CREATE TABLE sync_row_links (
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        owner_id uuid NOT NULL,
        source_row_id text NOT NULL,
        target_row_id text NOT NULL,
        last_values jsonb NOT NULL DEFAULT '{}',
        synced_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (owner_id, source_row_id)
      )`);
    await q.query(`CREATE INDEX sync_row_links_org_idx ON sync_row_links (organization_id, owner_id)`);
    await q.query(`CREATE INDEX sync_row_links_target_idx ON sync_row_links (owner_id, target_row_id)`);

    await q.query(`
      CREATE TABLE sync_revision_origins (
        revision_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        document_id uuid NOT NULL,
        origin_kind text NOT NULL CHECK (origin_kind IN ('binding', 'connector')),
        origin_id uuid NOT NULL,
        source_document_id uuid,
        source_revision_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX sync_revision_origins_org_idx ON sync_revision_origins (organization_id, document_id, created_at)`,
    );

    await q.query(`
      CREATE TABLE sync_currency_rates (
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        base_currency text NOT NULL,
        quote_currency text NOT NULL,
        effective_date date NOT NULL,
        rate double precision NOT NULL CHECK (rate > 0),
        updated_by uuid NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organization_id, base_currency, quote_currency, effective_date)
      )`);

    await q.query(`
      CREATE TABLE connector_runs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        connector_id uuid NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
        trigger text NOT NULL CHECK (trigger IN ('realtime', 'scheduled', 'manual')),
        direction text NOT NULL CHECK (direction IN ('forward', 'reverse')),
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'skipped')),
        source_revision_id uuid,
        target_revision_id uuid,
        scheduled_for timestamptz,
        rows_created integer NOT NULL DEFAULT 0,
        rows_updated integer NOT NULL DEFAULT 0,
        rows_deleted integer NOT NULL DEFAULT 0,
        rows_skipped integer NOT NULL DEFAULT 0,
        attempts integer NOT NULL DEFAULT 0,
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX connector_runs_org_idx ON connector_runs (organization_id, connector_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX connector_runs_pending_idx ON connector_runs (created_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX connector_runs_realtime_uq ON connector_runs (connector_id, source_revision_id, direction) WHERE trigger = 'realtime'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX connector_runs_scheduled_uq ON connector_runs (connector_id, scheduled_for) WHERE trigger = 'scheduled'`,
    );

    await q.query(`
      CREATE TABLE connector_schedules (
        connector_id uuid PRIMARY KEY REFERENCES connectors (id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        next_run_at timestamptz NOT NULL,
        last_run_at timestamptz
      )`);
    await q.query(`CREATE INDEX connector_schedules_org_idx ON connector_schedules (organization_id)`);
    await q.query(`CREATE INDEX connector_schedules_due_idx ON connector_schedules (next_run_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'connector_schedules',
      'connector_runs',
      'sync_currency_rates',
      'sync_revision_origins',
      'sync_row_links',
      'sync_propagation_jobs',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
