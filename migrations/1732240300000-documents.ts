import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents core (docs/documents.md): documents, their rows and properties, change requests with their changes,
 * and the append-only revision history.
 *
 * - `document_rows.values` is one JSONB object per row keyed by field id holding the stored primitive of the field
 *   type; `seq` (one global identity) is the insertion order used as the final sort key and keyset tiebreaker.
 * - Rows are hard-deleted; their last state lives on in `revision_operations.old_value`.
 * - `revisions` and `revision_operations` refuse UPDATE (history is never edited).
 * - High-volume child tables (`document_rows`, `request_changes`, `revision_operations`) are reached only through
 *   their tenant-scoped parent (`documents`, `requests`, `revisions`), so they carry the parent key, not the tenant ids.
 */
export class Documents1732240300000 implements MigrationInterface {
  name = 'Documents1732240300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE documents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        doc_type text NOT NULL,
        doc_id text NOT NULL,
        title text,
        metadata jsonb NOT NULL DEFAULT '{"fields": [], "properties": []}'::jsonb,
        metadata_version bigint NOT NULL DEFAULT 0,
        settings jsonb NOT NULL DEFAULT '{}'::jsonb,
        version bigint NOT NULL DEFAULT 0,
        row_seq bigint NOT NULL DEFAULT 0,
        row_count bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text,
        deleted_at timestamptz,
        deleted_by text
      )`);
    await q.query(`CREATE UNIQUE INDEX documents_type_doc_uq ON documents (doc_type, doc_id) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX documents_workspace_idx ON documents (workspace_id, doc_type, created_at, id) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX documents_organization_idx ON documents (organization_id)`);

    await q.query(`
      CREATE TABLE document_rows (
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        "values" jsonb NOT NULL DEFAULT '{}'::jsonb,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text,
        PRIMARY KEY (document_id, id)
      )`);
    await q.query(`CREATE UNIQUE INDEX document_rows_seq_idx ON document_rows (document_id, seq)`);
    await q.query(`CREATE INDEX document_rows_values_gin ON document_rows USING gin ("values" jsonb_path_ops)`);

    await q.query(`
      CREATE TABLE document_properties (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        properties jsonb NOT NULL DEFAULT '{}'::jsonb,
        version bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text,
        CONSTRAINT document_properties_document_uq UNIQUE (document_id)
      )`);
    await q.query(`CREATE INDEX document_properties_workspace_idx ON document_properties (workspace_id)`);

    await q.query(`
      CREATE TABLE requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        title text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'merged', 'closed')),
        author text NOT NULL,
        reviewers text[] NOT NULL DEFAULT '{}',
        contributors text[] NOT NULL DEFAULT '{}',
        implicit boolean NOT NULL DEFAULT false,
        change_count integer NOT NULL DEFAULT 0,
        generated_revision_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        merged_at timestamptz,
        merged_by text,
        closed_at timestamptz,
        closed_by text
      )`);
    await q.query(`CREATE INDEX requests_workspace_idx ON requests (workspace_id, created_at)`);
    await q.query(`CREATE INDEX requests_document_idx ON requests (document_id, status, created_at DESC, id)`);

    await q.query(`
      CREATE TABLE request_changes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        request_id uuid NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        type text NOT NULL,
        operation text NOT NULL CHECK (operation IN ('create', 'update', 'delete')),
        target_id text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        changed_at timestamptz NOT NULL DEFAULT now(),
        changed_by text NOT NULL
      )`);
    await q.query(`CREATE INDEX request_changes_request_idx ON request_changes (request_id, seq)`);

    await q.query(`
      CREATE TABLE revisions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        version bigint NOT NULL,
        request_id uuid,
        title text,
        description text,
        contributors text[] NOT NULL DEFAULT '{}',
        merged_by text,
        stats jsonb NOT NULL DEFAULT '{}'::jsonb,
        operation_count integer NOT NULL DEFAULT 0,
        previous_revision_id uuid REFERENCES revisions(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT revisions_document_version_uq UNIQUE (document_id, version)
      )`);
    await q.query(`CREATE INDEX revisions_workspace_idx ON revisions (workspace_id, created_at)`);

    await q.query(`
      CREATE TABLE revision_operations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        revision_id uuid NOT NULL REFERENCES revisions(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal integer NOT NULL,
        type text NOT NULL,
        target jsonb NOT NULL,
        target_kind text NOT NULL,
        target_row_id text,
        target_field_id text,
        old_value jsonb,
        new_value jsonb,
        operator text,
        "timestamp" timestamptz NOT NULL DEFAULT now(),
        note text,
        CONSTRAINT revision_operations_ordinal_uq UNIQUE (revision_id, ordinal)
      )`);
    await q.query(`CREATE INDEX revision_operations_target_idx ON revision_operations (document_id, target_kind, target_row_id)`);

    // Per-document expression indexes built on demand for fields that are sorted or filtered often (docs/documents.md).
    await q.query(`
      CREATE TABLE document_field_indexes (
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        field_id text NOT NULL,
        index_name text NOT NULL,
        expression text NOT NULL,
        status text NOT NULL DEFAULT 'building' CHECK (status IN ('building', 'ready', 'failed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (document_id, field_id),
        CONSTRAINT document_field_indexes_name_uq UNIQUE (index_name)
      )`);

    // History is append-only: refuse edits (deletes only happen through cascades of a hard-deleted tenant).
    await q.query(`
      CREATE FUNCTION quire_refuse_history_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'revision history is append-only' USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(`CREATE TRIGGER revisions_append_only BEFORE UPDATE ON revisions FOR EACH ROW EXECUTE FUNCTION quire_refuse_history_update()`);
    await q.query(
      `CREATE TRIGGER revision_operations_append_only BEFORE UPDATE ON revision_operations FOR EACH ROW EXECUTE FUNCTION quire_refuse_history_update()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['document_field_indexes', 'revision_operations', 'revisions', 'request_changes', 'requests', 'document_properties', 'document_rows', 'documents']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS quire_refuse_history_update()`);
  }
}
