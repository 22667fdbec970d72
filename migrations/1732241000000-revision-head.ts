import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `documents.last_revision_id`: the document's newest revision, and `documents.previous_revision_id` the one before
 * it, both set by the UPDATE that numbers a revision (RevisionRepository.commit). The UPDATE links the new revision
 * to its predecessor in the statement that takes the document row lock, where a lookup of `version - 1` would read
 * a snapshot older than the lock (docs/performance.md, "Writers").
 */
export class RevisionHead1732241000000 implements MigrationInterface {
  name = 'RevisionHead1732241000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE documents ADD COLUMN last_revision_id uuid, ADD COLUMN previous_revision_id uuid`,
    );
    await q.query(`
      UPDATE documents d SET last_revision_id = r.id, previous_revision_id = r.previous_revision_id
        FROM revisions r
       WHERE r.document_id = d.id AND r.version = d.version`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE documents DROP COLUMN last_revision_id, DROP COLUMN previous_revision_id`);
  }
}
