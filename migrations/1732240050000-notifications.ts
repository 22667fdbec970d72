import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Notifications1732240050000 implements MigrationInterface {
  name = 'Notifications1732240050000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notifications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        channel text NOT NULL CHECK (channel IN ('email', 'sms')),
        recipient text NOT NULL,
        kind text NOT NULL,
        subject text NOT NULL,
        body text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        last_error text
      )`);
    await q.query(`CREATE INDEX notifications_recipient_idx ON notifications (lower(recipient), created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE notifications`);
  }
}
