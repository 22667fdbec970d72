import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A sign-in attempt is recorded before its password or code is checked (LoginThrottleService.reserve), so attempts
 * sent at once cannot all pass the limit. Counted as failures while in flight, the attempts of a user typing the right
 * password refused one another (twelve right passwords at once: five signed in, seven answered 429). `pending` marks
 * an attempt not checked yet: it only makes later attempts wait (never refuses them) until it is settled — deleted on
 * success, `pending = false` on failure. A pending row older than a few seconds (its request died) counts as a
 * failure. Existing rows are settled failures; the constant default costs no table rewrite.
 */
export class LoginAttemptsPending1732242110000 implements MigrationInterface {
  name = 'LoginAttemptsPending1732242110000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE login_failures ADD COLUMN pending boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE login_failures DROP COLUMN pending`);
  }
}
