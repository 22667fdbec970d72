import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spec 2.13's webhook create body names no organization. A webhook created without one (no `organizationId`, no
 * `X-Organization-Id`) now follows its creator into every organization the creator belongs to (`all_organizations`),
 * instead of only the default one: events of a document in a second organization were never delivered. It stays
 * listed and managed under the organization it was created in. Existing webhooks keep their one organization.
 */
export class WebhookAllOrganizations1732241500000 implements MigrationInterface {
  name = 'WebhookAllOrganizations1732241500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN all_organizations boolean NOT NULL DEFAULT false`);
    // Dispatch finds them by creator among an organization's members.
    await q.query(`CREATE INDEX webhooks_all_organizations_idx ON webhooks (created_by) WHERE all_organizations`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhooks_all_organizations_idx`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN all_organizations`);
  }
}
