import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spec 2.4 binds `Tenant.InvitationStatus` to `pending`, `accepted`, `expired`, `revoked`. A decline is stored as
 * `revoked` with `declined_at` (a revoke by the organization sets `revoked_at` instead), so `declined` rows move to
 * `revoked` and the CHECK constraint admits only the four spec values.
 */
export class InvitationDeclinedRevoked1732241400000 implements MigrationInterface {
  name = 'InvitationDeclinedRevoked1732241400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE organization_invitations SET status = 'revoked', declined_at = coalesce(declined_at, updated_at)
        WHERE status = 'declined'`,
    );
    await q.query(
      `ALTER TABLE organization_invitations DROP CONSTRAINT organization_invitations_status_check`,
    );
    await q.query(
      `ALTER TABLE organization_invitations ADD CONSTRAINT organization_invitations_status_check
         CHECK (status IN ('pending', 'accepted', 'expired', 'revoked'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE organization_invitations DROP CONSTRAINT organization_invitations_status_check`,
    );
    await q.query(
      `ALTER TABLE organization_invitations ADD CONSTRAINT organization_invitations_status_check
         CHECK (status IN ('pending', 'accepted', 'expired', 'revoked', 'declined'))`,
    );
    // A decline has declined_at without revoked_at; one the organization revoked after the decline stays revoked.
    await q.query(
      `UPDATE organization_invitations SET status = 'declined'
        WHERE status = 'revoked' AND declined_at IS NOT NULL AND revoked_at IS NULL`,
    );
  }
}
