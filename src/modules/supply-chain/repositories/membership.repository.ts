import { Injectable } from '@nestjs/common';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { TransactionHost } from '../../../database/transaction-host.js';

/**
 * Who may still act in an organization, read-only from `organizations` and `organization_members` (tenancy owns
 * them; like CatalogRepository.organizationNames): the people server-side supply-chain work falls back to when the
 * user it would act for, or tell, is no longer an active member (ActingMembers).
 */
@Injectable()
export class MembershipRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The owner of the organization (null when it is unknown or archived). */
  async ownerId(organizationId: string): Promise<string | null> {
    const row = await queryFirst<{ ownerId: string }>(
      this.tx,
      `SELECT o.owner_id AS "ownerId" FROM organizations o WHERE o.id = $1 AND o.archived_at IS NULL`,
      [organizationId],
    );
    return row?.ownerId ?? null;
  }

  /** The organization's active owners and admins, the owner first, then by when they joined. */
  async activeManagerIds(organizationId: string): Promise<string[]> {
    const rows = await queryRows<{ userId: string }>(
      this.tx,
      `SELECT m.user_id AS "userId" FROM organization_members m
         JOIN organizations o ON o.id = m.organization_id AND o.archived_at IS NULL
        WHERE m.organization_id = $1 AND m.status = 'active' AND m.role IN ('owner', 'admin')
        ORDER BY m.role = 'owner' DESC, m.joined_at, m.user_id`,
      [organizationId],
    );
    return rows.map((row) => row.userId);
  }
}
