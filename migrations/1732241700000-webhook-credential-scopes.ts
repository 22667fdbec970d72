import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook delivers only the events the credential that created it could read through the API (spec 5.8: row
 * events need `data:read`, the other document events `doc:read`), so `webhooks:manage` alone no longer reads row
 * values through deliveries (docs/webhooks.md, "What a webhook may see"). `credential_scopes` keeps that
 * credential's scopes, narrowed by later PUTs. Webhooks created before this migration keep NULL: unrestricted, as
 * they delivered until now.
 */
export class WebhookCredentialScopes1732241700000 implements MigrationInterface {
  name = 'WebhookCredentialScopes1732241700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN credential_scopes text[]`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN credential_scopes`);
  }
}
