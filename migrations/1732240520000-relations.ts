import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Relations between rows (spec 4.4, docs/documents.md "Relations"): one edges table for both kinds of link.
 * - `field_id` NULL: a free-standing edge created with `POST /relations` (through a request, like any write).
 * - `field_id` set: the edge IS one reference of that `relation` field's value on the source row; the merge keeps
 *   these edges equal to the stored value (`type` is then the field id).
 * Both ends are rows of documents of one organization (`organization_id`); rows are plain ids (rows are
 * hard-deleted; a merge deleting a row deletes its edges in both directions and keeps them in its revision).
 */
export class Relations1732240520000 implements MigrationInterface {
  name = 'Relations1732240520000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE document_relations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        source_document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        source_row_id text NOT NULL,
        field_id text,
        type text NOT NULL,
        direction text NOT NULL DEFAULT 'outgoing' CHECK (direction IN ('outgoing', 'bidirectional')),
        target_document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        target_row_id text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL
      )`);
    await q.query(
      `CREATE UNIQUE INDEX document_relations_edge_uq ON document_relations
         (organization_id, source_document_id, source_row_id, coalesce(field_id, ''), type, target_document_id, target_row_id)`,
    );
    await q.query(`CREATE INDEX document_relations_source_idx ON document_relations (source_document_id, source_row_id, field_id)`);
    await q.query(`CREATE INDEX document_relations_target_idx ON document_relations (target_document_id, target_row_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE document_relations`);
  }
}
