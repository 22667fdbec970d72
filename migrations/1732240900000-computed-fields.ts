import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Computed fields (docs/formulas.md). Values of formulas, lookups and rollups are materialised into the rows'
 * `values` (no new column). This table remembers which documents a relation field's lookups have read from, so a
 * read can hide lookups and rollups over documents the reader cannot read without scanning the edges, and a
 * metadata change of the target document can name the lookups reading a field it deletes or retypes. Rows are only
 * added (a stale entry errs on the safe side); they go with either document.
 */
export class ComputedFields1732240900000 implements MigrationInterface {
  name = 'ComputedFields1732240900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE computed_field_sources (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        relation_field_id text NOT NULL,
        target_document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        PRIMARY KEY (organization_id, document_id, relation_field_id, target_document_id)
      )`);
    // Which documents read from this one: deleting or retyping a field there names the lookups that read it.
    await q.query(
      `CREATE INDEX computed_field_sources_target_idx ON computed_field_sources (organization_id, target_document_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE computed_field_sources`);
  }
}
