import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * E-mail is delivered from `notifications` with retries (docs/decisions/mail-delivery.md): `attempts`
 * counts sending attempts, `next_attempt_at` is when the message is due (NULL: nothing left to send),
 * `failed_at` marks a message given up after MAIL_MAX_ATTEMPTS. `sent_at` and `last_error` already exist.
 */
export class NotificationDelivery1732240460000 implements MigrationInterface {
  name = 'NotificationDelivery1732240460000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE notifications
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN next_attempt_at timestamptz,
        ADD COLUMN failed_at timestamptz`);
    // Messages from before this migration had their one attempt after commit; none is queued again, since
    // a sign-in code or invitation resent days later would only confuse.
    await q.query(
      `UPDATE notifications SET attempts = 1 WHERE sent_at IS NOT NULL OR last_error IS NOT NULL`,
    );
    await q.query(`
      CREATE INDEX notifications_due_idx ON notifications (next_attempt_at)
        WHERE next_attempt_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX notifications_due_idx`);
    await q.query(`
      ALTER TABLE notifications
        DROP COLUMN failed_at,
        DROP COLUMN next_attempt_at,
        DROP COLUMN attempts`);
  }
}
