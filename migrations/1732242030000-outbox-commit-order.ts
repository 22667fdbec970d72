import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events are numbered (`seq`) when they are recorded but commit in another order, so a reader that tails the outbox by
 * `seq` skipped an event numbered before one it had already read that committed after it (docs/realtime.md, "Order
 * and resume"). Each event now records the transaction that wrote it (`tx_id`, the top-level `pg_current_xact_id()`):
 * readers take only events whose transaction is older than every transaction still running (below the snapshot's
 * xmin), in (`tx_id`, `seq`) order, which no later commit can fall behind.
 *
 * Events written before this migration have long committed: they read as transaction 0, before every new one, in
 * their old `seq` order. The constant default is stored once in the catalogue (no table rewrite); the volatile
 * default set afterwards applies to new rows only. `outbox_realtime_pos_idx` replaces `outbox_realtime_doc_idx`
 * (1732240700000-realtime) for the stream's catch-up, live reads and history, in the new order.
 */
export class OutboxCommitOrder1732242030000 implements MigrationInterface {
  name = 'OutboxCommitOrder1732242030000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN tx_id xid8 NOT NULL DEFAULT '0'`);
    await q.query(`ALTER TABLE outbox ALTER COLUMN tx_id SET DEFAULT pg_current_xact_id()`);
    await q.query(
      `CREATE INDEX outbox_realtime_pos_idx ON outbox (organization_id, workspace_id, doc_type, doc_id, tx_id, seq)`,
    );
    await q.query(`DROP INDEX IF EXISTS outbox_realtime_doc_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS outbox_realtime_doc_idx ON outbox (organization_id, workspace_id, doc_type, doc_id, seq)`,
    );
    await q.query(`DROP INDEX IF EXISTS outbox_realtime_pos_idx`);
    await q.query(`ALTER TABLE outbox DROP COLUMN tx_id`);
  }
}
