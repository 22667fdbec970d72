import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk writes near the database's rate (issue 15, docs/performance.md "Sixth pass").
 *
 * - `requests.inline_changes`: the changes of a request that is merged in the transaction that opens it (a write
 *   without `requestId`), kept as one JSON array on the request instead of one `request_changes` row each. Such a
 *   request never takes another change, so its changes are never addressed one by one; a 1000-row bulk write stored
 *   1000 rows, each with its foreign-key check, for one value PostgreSQL now compresses and stores at once.
 * - `request_change_items`: every request's changes, whichever way they are stored, with the columns of
 *   `request_changes`. An inline change's `seq` is its position in the request (changes are only ever ordered
 *   within their request), its time the request's creation, its author the request's.
 * - `revision_operations` keeps no foreign keys. Each cost a lookup per operation (1000 for a 1000-row bulk write,
 *   the one to `revisions` deferred to the commit). Operations are only ever inserted by the statement that inserts
 *   their revision, or in the transaction that does (RevisionRepository), so the reference holds by construction;
 *   deleting revisions (a hard-deleted document or tenant) still deletes their operations, through a statement
 *   trigger on `revisions` that does what `ON DELETE CASCADE` did.
 */
export class InlineRequestChanges1732241200000 implements MigrationInterface {
  name = 'InlineRequestChanges1732241200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE requests ADD COLUMN inline_changes json`);
    await q.query(`
      CREATE VIEW request_change_items AS
        SELECT c.request_id, c.id, c.seq, c.type, c.operation, c.target_id, c.data, c.changed_at, c.changed_by
          FROM request_changes c
        UNION ALL
        SELECT q.id, (e.value ->> 'id')::uuid, e.seq, e.value ->> 'type', e.value ->> 'operation',
               e.value ->> 'targetId', (e.value -> 'data')::jsonb, q.created_at, q.author
          FROM requests q
         CROSS JOIN LATERAL json_array_elements(q.inline_changes) WITH ORDINALITY AS e(value, seq)
         WHERE q.inline_changes IS NOT NULL`);
    await q.query(`ALTER TABLE revision_operations DROP CONSTRAINT revision_operations_document_id_fkey`);
    await q.query(`ALTER TABLE revision_operations DROP CONSTRAINT revision_operations_revision_id_fkey`);
    await q.query(`
      CREATE FUNCTION quire_delete_revision_operations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM revision_operations o USING deleted_revisions d WHERE o.revision_id = d.id;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER revisions_delete_operations AFTER DELETE ON revisions
         REFERENCING OLD TABLE AS deleted_revisions FOR EACH STATEMENT EXECUTE FUNCTION quire_delete_revision_operations()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO request_changes (request_id, id, type, operation, target_id, data, changed_at, changed_by)
      SELECT i.request_id, i.id, i.type, i.operation, i.target_id, i.data, i.changed_at, i.changed_by
        FROM request_change_items i JOIN requests q ON q.id = i.request_id
       WHERE q.inline_changes IS NOT NULL
       ORDER BY i.request_id, i.seq`);
    await q.query(`DROP VIEW request_change_items`);
    await q.query(`ALTER TABLE requests DROP COLUMN inline_changes`);
    await q.query(`DROP TRIGGER revisions_delete_operations ON revisions`);
    await q.query(`DROP FUNCTION quire_delete_revision_operations()`);
    await q.query(
      `ALTER TABLE revision_operations
         ADD CONSTRAINT revision_operations_revision_id_fkey
             FOREIGN KEY (revision_id) REFERENCES revisions(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
         ADD CONSTRAINT revision_operations_document_id_fkey
             FOREIGN KEY (document_id) REFERENCES documents(id) ON DELETE CASCADE`,
    );
  }
}
