import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A write to an open request reads the changes already recorded for the targets it touches (its rows, the
 * metadata, the properties). With only `(request_id, seq)` that read scanned every change of the request, so the
 * 1000th append cost more than the 1st; this index makes it a lookup by target (docs/performance.md, "Writers").
 */
export class WritePathIndexes1732240470000 implements MigrationInterface {
  name = 'WritePathIndexes1732240470000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX request_changes_target_idx ON request_changes (request_id, target_id, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS request_changes_target_idx`);
  }
}
