import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Supply-chain resources (docs/supply-chain.md): catalogs and order books (each the record of an
 * organization-level document of type `catalog` / `orderbook`), connections of a catalog, their share links,
 * bindings of an order book to a connection, order-book sync requests and sync logs, and connectors.
 * Every table carries `organization_id` (the owner: the supplier for catalogs, connections and share links, the
 * buyer for order books, bindings, sync requests and logs) and an index starting with it. The propagation
 * helper's own bookkeeping lives in its migration (1732240920000).
 */
export class SupplyChain1732240910000 implements MigrationInterface {
  name = 'SupplyChain1732240910000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE catalogs (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        document_id uuid NOT NULL UNIQUE REFERENCES documents (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        catalog_type text NOT NULL,
        sharing_enabled boolean NOT NULL DEFAULT true,
        field_descriptions jsonb NOT NULL DEFAULT '{}',
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX catalogs_org_idx ON catalogs (organization_id, created_at, id)`);

    await q.query(`
      CREATE TABLE orderbooks (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        document_id uuid NOT NULL UNIQUE REFERENCES documents (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        generated_fields jsonb NOT NULL DEFAULT '[]',
        field_descriptions jsonb NOT NULL DEFAULT '{}',
        source_connection_ids uuid[] NOT NULL DEFAULT '{}',
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX orderbooks_org_idx ON orderbooks (organization_id, created_at, id)`);

    // Connections: owned by the supplier organization. access_mode + allowed_organizations are the normalized
    // accessControl; the JSON columns keep the validated objects as given.
    await q.query(`
      CREATE TABLE catalog_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        catalog_id uuid NOT NULL REFERENCES catalogs (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        share_mode text NOT NULL DEFAULT 'multiple',
        access_mode text NOT NULL CHECK (access_mode IN ('public', 'whitelist', 'approval')),
        allowed_organizations uuid[] NOT NULL DEFAULT '{}',
        share_scope jsonb NOT NULL DEFAULT '{"type":"all"}',
        default_receiver_config jsonb,
        propagation_events jsonb NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'disabled')),
        created_by uuid NOT NULL,
        updated_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        paused_at timestamptz,
        disabled_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX catalog_connections_org_idx ON catalog_connections (organization_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX catalog_connections_catalog_idx ON catalog_connections (catalog_id) WHERE status = 'active'`,
    );

    // Share links: the code is shown once; only its SHA-256 is kept (server-generated, so a global unique index
    // squats nothing).
    await q.query(`
      CREATE TABLE connection_share_links (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        connection_id uuid NOT NULL REFERENCES catalog_connections (id) ON DELETE CASCADE,
        code_hash text NOT NULL UNIQUE,
        expires_at timestamptz,
        max_uses integer,
        uses integer NOT NULL DEFAULT 0,
        revoked_at timestamptz,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX connection_share_links_org_idx ON connection_share_links (organization_id, connection_id, created_at)`,
    );

    // Bindings: owned by the buyer organization (organization_id); supplier_organization_id lets the supplier list
    // and decide the bindings of its connections without reading the buyer's order book.
    await q.query(`
      CREATE TABLE orderbook_bindings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        orderbook_id uuid NOT NULL REFERENCES orderbooks (id) ON DELETE CASCADE,
        connection_id uuid NOT NULL REFERENCES catalog_connections (id) ON DELETE CASCADE,
        supplier_organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        catalog_id uuid NOT NULL REFERENCES catalogs (id) ON DELETE CASCADE,
        field_mapping jsonb NOT NULL,
        receiver_filter jsonb NOT NULL,
        conflict_resolution jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'rejected')),
        admitted_via text NOT NULL CHECK (admitted_via IN ('public', 'whitelist', 'approval', 'share_link')),
        share_link_id uuid REFERENCES connection_share_links (id) ON DELETE SET NULL,
        review_note text,
        reviewed_by uuid,
        reviewed_at timestamptz,
        activated_at timestamptz,
        created_by uuid NOT NULL,
        updated_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX orderbook_bindings_org_idx ON orderbook_bindings (organization_id, orderbook_id, created_at)`,
    );
    await q.query(
      `CREATE INDEX orderbook_bindings_supplier_idx ON orderbook_bindings (supplier_organization_id, connection_id, created_at)`,
    );
    await q.query(
      `CREATE INDEX orderbook_bindings_active_idx ON orderbook_bindings (connection_id) WHERE status = 'active'`,
    );
    // One live (pending or active) binding per order book and connection.
    await q.query(
      `CREATE UNIQUE INDEX orderbook_bindings_live_uq ON orderbook_bindings (orderbook_id, connection_id) WHERE status IN ('pending', 'active')`,
    );

    // Sync requests of an order book: a proposed set of row changes (create_row | update_row | delete_row) from a
    // binding's propagation or a client; document_request_id is the document request that carries the changes.
    await q.query(`
      CREATE TABLE orderbook_sync_requests (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        orderbook_id uuid NOT NULL REFERENCES orderbooks (id) ON DELETE CASCADE,
        binding_id uuid REFERENCES orderbook_bindings (id) ON DELETE SET NULL,
        request_type text NOT NULL,
        source jsonb NOT NULL DEFAULT '{}',
        changes jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
        message text,
        document_request_id uuid,
        product_info jsonb,
        decided_by uuid,
        decided_at timestamptz,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- The id may be chosen by the client (requestId): unique within the organization only.
        PRIMARY KEY (organization_id, id)
      )`);
    await q.query(
      `CREATE INDEX orderbook_sync_requests_org_idx ON orderbook_sync_requests (organization_id, orderbook_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX orderbook_sync_requests_status_idx ON orderbook_sync_requests (orderbook_id, status, created_at)`,
    );

    // Sync logs: one row per (binding, source row) outcome of a propagation run; idempotency_key lets a writer
    // record each outcome once.
    await q.query(`
      CREATE TABLE orderbook_sync_logs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        orderbook_id uuid NOT NULL REFERENCES orderbooks (id) ON DELETE CASCADE,
        binding_id uuid REFERENCES orderbook_bindings (id) ON DELETE CASCADE,
        connection_id uuid,
        catalog_id uuid,
        catalog_revision_id uuid,
        catalog_revision_version bigint,
        event_type text,
        source_row_id text,
        target_row_id text,
        outcome text NOT NULL CHECK (outcome IN ('accepted', 'pending', 'rejected', 'filtered', 'conflict', 'error', 'skipped')),
        reason text,
        sync_request_id uuid,
        details jsonb,
        idempotency_key text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX orderbook_sync_logs_org_idx ON orderbook_sync_logs (organization_id, orderbook_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX orderbook_sync_logs_binding_idx ON orderbook_sync_logs (binding_id, created_at, id)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX orderbook_sync_logs_idem_uq ON orderbook_sync_logs (binding_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );

    // Connectors: inside one organization; the config column keeps the validated orderbookToCatalogConfig or
    // catalogCloneConfig; sync_mode / schedule are copied out for the scheduler.
    await q.query(`
      CREATE TABLE connectors (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name text NOT NULL,
        connector_type text NOT NULL CHECK (connector_type IN ('orderbook_to_catalog', 'catalog_clone')),
        source_doc_type text NOT NULL,
        source_doc_id text NOT NULL,
        source_document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        target_doc_type text NOT NULL,
        target_doc_id text NOT NULL,
        target_document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        config jsonb NOT NULL,
        sync_mode text NOT NULL CHECK (sync_mode IN ('realtime', 'scheduled')),
        schedule_cron text,
        schedule_timezone text,
        bidirectional boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX connectors_org_idx ON connectors (organization_id, created_at, id)`);
    await q.query(
      `CREATE INDEX connectors_source_idx ON connectors (source_document_id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX connectors_target_idx ON connectors (target_document_id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX connectors_scheduled_idx ON connectors (sync_mode) WHERE deleted_at IS NULL AND sync_mode = 'scheduled'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'connectors',
      'orderbook_sync_logs',
      'orderbook_sync_requests',
      'orderbook_bindings',
      'connection_share_links',
      'catalog_connections',
      'orderbooks',
      'catalogs',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
