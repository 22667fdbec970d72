import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Third-party sign-in on the issuer's /authorize page (docs/auth.md, "`/authorize`"): a login state started from
 * the page carries the page's signed authorization-request token, so the provider's return resumes that
 * interaction without a cookie. Such a state is redeemable only at the page's callback, and an API state (no token)
 * only at POST /auth/oauth/{provider}/callback or the bind request; a page state never binds (no user).
 */
export class AuthorizePageLoginStates1732241900000 implements MigrationInterface {
  name = 'AuthorizePageLoginStates1732241900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_login_states ADD COLUMN authorize_request_token text`);
    await q.query(`
      ALTER TABLE oauth_login_states ADD CONSTRAINT oauth_login_states_page_or_bind
        CHECK (authorize_request_token IS NULL OR user_id IS NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM oauth_login_states WHERE authorize_request_token IS NOT NULL`);
    await q.query(`ALTER TABLE oauth_login_states DROP CONSTRAINT oauth_login_states_page_or_bind`);
    await q.query(`ALTER TABLE oauth_login_states DROP COLUMN authorize_request_token`);
  }
}
