import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A sync request's id may be chosen by the client (`requestId` of `POST /orderbooks/{id}/requests`, spec 4.8, which
 * gives no format): any URL-safe string of up to 128 characters, unique within the organization, so the column is
 * text. Generated ids stay UUIDs. The sync logs name the request they produced by the same id.
 */
export class SyncRequestIds1732241100000 implements MigrationInterface {
  name = 'SyncRequestIds1732241100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE orderbook_sync_requests
        ALTER COLUMN id DROP DEFAULT,
        ALTER COLUMN id TYPE text USING id::text,
        ALTER COLUMN id SET DEFAULT gen_random_uuid()::text`);
    await q.query(
      `ALTER TABLE orderbook_sync_logs ALTER COLUMN sync_request_id TYPE text USING sync_request_id::text`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // Client-chosen ids that are not UUIDs have no place in the old columns.
    const uuid = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;
    await q.query(`UPDATE orderbook_sync_logs SET sync_request_id = NULL WHERE sync_request_id !~ ${uuid}`);
    await q.query(`DELETE FROM orderbook_sync_requests WHERE id !~ ${uuid}`);
    await q.query(
      `ALTER TABLE orderbook_sync_logs ALTER COLUMN sync_request_id TYPE uuid USING sync_request_id::uuid`,
    );
    await q.query(`
      ALTER TABLE orderbook_sync_requests
        ALTER COLUMN id DROP DEFAULT,
        ALTER COLUMN id TYPE uuid USING id::uuid,
        ALTER COLUMN id SET DEFAULT gen_random_uuid()`);
  }
}
