import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Concurrent writers of one document (issue 15, docs/performance.md "Seventh pass").
 *
 * `requests.document_id` keeps no foreign key. The key's check took a `FOR KEY SHARE` lock on the document's row
 * in every transaction that opened a request, that is in every write without `requestId`; twenty writers of one
 * document each held one at once, so PostgreSQL kept them as a shared multixact that every new locker copied and
 * the merge's `UPDATE documents` (the revision number) had to rewrite. Replaying one write's exact statements with
 * twenty connections, the database alone went from 396 to 622 transactions/s without it.
 *
 * The reference still holds:
 * - a request merged in the transaction that opens it is followed, in that transaction, by the merge's update of
 *   the document row, which finds no row for a document deleted meanwhile and rolls everything back;
 * - a request that stays open is inserted by a statement that locks the document row `FOR KEY SHARE` itself
 *   (RequestRepository.createWithChanges), exactly what the key did;
 * - deleting documents (a hard-deleted document or tenant) still deletes their requests, through a statement
 *   trigger that does what `ON DELETE CASCADE` did; the requests' own dependents cascade from there.
 */
export class RequestDocumentReference1732241300000 implements MigrationInterface {
  name = 'RequestDocumentReference1732241300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE requests DROP CONSTRAINT requests_document_id_fkey`);
    await q.query(`
      CREATE FUNCTION quire_delete_document_requests() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM requests q USING deleted_documents d WHERE q.document_id = d.id;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER documents_delete_requests AFTER DELETE ON documents
         REFERENCING OLD TABLE AS deleted_documents FOR EACH STATEMENT EXECUTE FUNCTION quire_delete_document_requests()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER documents_delete_requests ON documents`);
    await q.query(`DROP FUNCTION quire_delete_document_requests()`);
    await q.query(
      `DELETE FROM requests q WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = q.document_id)`,
    );
    await q.query(
      `ALTER TABLE requests ADD CONSTRAINT requests_document_id_fkey
         FOREIGN KEY (document_id) REFERENCES documents(id) ON DELETE CASCADE`,
    );
  }
}
