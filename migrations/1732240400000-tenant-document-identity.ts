import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents belong to their tenant (docs/documents.md, "Identity and workspace context").
 *
 * - A workspace document is identified by `(workspace_id, doc_type, doc_id)`; an organization-level document
 *   (catalogs, order books: `workspace_id` NULL) by `(organization_id, doc_type, doc_id)`. The old index made
 *   `(doc_type, doc_id)` unique across every tenant, which let one tenant squat ids for all others and told
 *   strangers which ids were taken.
 * - `workspace_id` becomes nullable on documents and on the tables that copy it (properties, requests,
 *   revisions). Existing rows keep their values: every existing document already has a workspace, so its new
 *   key is the old one plus that workspace; nothing is moved or lost.
 * - `documents_organization_lookup_idx` serves the lookup without a workspace context, which searches only the
 *   caller's organizations (its cost never depends on other tenants' documents).
 */
export class TenantDocumentIdentity1732240400000 implements MigrationInterface {
  name = 'TenantDocumentIdentity1732240400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS documents_type_doc_uq`);
    for (const table of ['documents', 'document_properties', 'requests', 'revisions']) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN workspace_id DROP NOT NULL`);
    }
    await q.query(
      `CREATE UNIQUE INDEX documents_workspace_doc_uq ON documents (workspace_id, doc_type, doc_id)
        WHERE deleted_at IS NULL AND workspace_id IS NOT NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX documents_organization_doc_uq ON documents (organization_id, doc_type, doc_id)
        WHERE deleted_at IS NULL AND workspace_id IS NULL`,
    );
    await q.query(
      `CREATE INDEX documents_organization_lookup_idx ON documents (organization_id, doc_type, doc_id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX documents_organization_level_idx ON documents (organization_id, doc_type, created_at, id)
        WHERE deleted_at IS NULL AND workspace_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // Only possible while no organization-level documents exist and ids are still globally distinct.
    await q.query(`DROP INDEX IF EXISTS documents_organization_level_idx`);
    await q.query(`DROP INDEX IF EXISTS documents_organization_lookup_idx`);
    await q.query(`DROP INDEX IF EXISTS documents_organization_doc_uq`);
    await q.query(`DROP INDEX IF EXISTS documents_workspace_doc_uq`);
    for (const table of ['documents', 'document_properties', 'requests', 'revisions']) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN workspace_id SET NOT NULL`);
    }
    await q.query(`CREATE UNIQUE INDEX documents_type_doc_uq ON documents (doc_type, doc_id) WHERE deleted_at IS NULL`);
  }
}
