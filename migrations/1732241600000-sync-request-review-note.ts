import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A buyer's decision on an order-book sync request keeps its review note (`reviewNote`, as binding decisions do).
 * The note had no column, so a decision either dropped it or overwrote the proposer's `message`.
 */
export class SyncRequestReviewNote1732241600000 implements MigrationInterface {
  name = 'SyncRequestReviewNote1732241600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orderbook_sync_requests ADD COLUMN review_note text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orderbook_sync_requests DROP COLUMN review_note`);
  }
}
