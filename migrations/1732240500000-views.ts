import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Views (spec 2.7) and type-level settings (spec 2.11), docs/views.md and docs/settings.md.
 *
 * - `views`: one per view of a document, keyed `(document_id, id)` — the id is client-chosen or generated, unique
 *   within its document (a document belongs to exactly one tenant, so the key starts with a tenant-scoped id).
 *   `organization_id`/`workspace_id` are copied from the document for tenant-scoped listing and the
 *   `(organization_id, ...)` index. At most one default view per document (partial unique index).
 * - `document_type_settings`: one per `(workspace, doc_type)`, or `(organization, doc_type)` for organization-level
 *   documents (`workspace_id` NULL); both unique indexes start with the tenant id. Its changes NOTIFY
 *   `quire_access_changed` (its permissions and sharing are cached on the access path like access rights).
 */
export class Views1732240500000 implements MigrationInterface {
  name = 'Views1732240500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE views (
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        id text NOT NULL,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
        name text NOT NULL,
        type text NOT NULL CHECK (type IN ('table', 'gallery', 'kanban', 'calendar', 'chart', 'form', 'map', 'timeline')),
        config jsonb NOT NULL DEFAULT '{}'::jsonb,
        is_default boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text,
        PRIMARY KEY (document_id, id)
      )`);
    await q.query(`CREATE INDEX views_document_list_idx ON views (document_id, created_at, id)`);
    await q.query(`CREATE UNIQUE INDEX views_document_default_uq ON views (document_id) WHERE is_default`);
    await q.query(`CREATE INDEX views_organization_idx ON views (organization_id, workspace_id)`);
    await q.query(`
      CREATE TABLE document_type_settings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
        doc_type text NOT NULL,
        default_view_id text,
        sharing jsonb NOT NULL DEFAULT '{}'::jsonb,
        permissions jsonb NOT NULL DEFAULT '{}'::jsonb,
        retention jsonb NOT NULL DEFAULT '{}'::jsonb,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text
      )`);
    await q.query(`CREATE UNIQUE INDEX document_type_settings_workspace_uq ON document_type_settings (workspace_id, doc_type) WHERE workspace_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX document_type_settings_organization_uq ON document_type_settings (organization_id, doc_type) WHERE workspace_id IS NULL`);
    // Type-level permissions and sharing are cached on the access path; announce changes like access changes
    // (migration 1732240450000's channel and function).
    await q.query(
      `CREATE TRIGGER document_type_settings_access_changed AFTER INSERT OR UPDATE OR DELETE ON document_type_settings
       FOR EACH STATEMENT EXECUTE FUNCTION quire_notify_access_changed()`,
    );
    // The retention job finds closed requests by document and age.
    await q.query(`CREATE INDEX requests_closed_idx ON requests (document_id, closed_at) WHERE status = 'closed'`);
    // Document notifications (docs/settings.md) are idempotent by event id: the subscriber looks the id up.
    await q.query(`CREATE INDEX notifications_event_idx ON notifications ((data->>'eventId')) WHERE data ? 'eventId'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS notifications_event_idx`);
    await q.query(`DROP INDEX IF EXISTS requests_closed_idx`);
    await q.query(`DROP TRIGGER IF EXISTS document_type_settings_access_changed ON document_type_settings`);
    await q.query(`DROP TABLE IF EXISTS document_type_settings`);
    await q.query(`DROP TABLE IF EXISTS views`);
  }
}
