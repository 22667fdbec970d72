import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { isUuid } from '../policies/organization-roles.js';

/**
 * Facts about an organization that other modules need without a caller's membership: its name shown across tenants
 * (a supplier's name to its buyers), and who may still act for it when the person server-side work was done for has
 * left (supply chain's ActingMembers). Reads in the current transaction.
 */
@Injectable()
export class OrganizationDirectoryService {
  constructor(private readonly tx: TransactionHost) {}

  /** The names of the given organizations (archived ones too: a history still names them), by id. */
  async names(organizationIds: string[]): Promise<Map<string, string>> {
    const ids = [...new Set(organizationIds.filter(isUuid))];
    if (ids.length === 0) {
      return new Map();
    }
    const rows = await this.tx.manager.query<Array<{ id: string; name: string }>>(
      `SELECT id, name FROM organizations WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  /** The owner of the organization (null when it is unknown or archived). */
  async ownerId(organizationId: string): Promise<string | null> {
    if (!isUuid(organizationId)) {
      return null;
    }
    const rows = await this.tx.manager.query<Array<{ ownerId: string }>>(
      `SELECT owner_id AS "ownerId" FROM organizations WHERE id = $1 AND archived_at IS NULL`,
      [organizationId],
    );
    return rows[0]?.ownerId ?? null;
  }

  /** The organization's active owners and admins, the owner first, then by when they joined (none when archived). */
  async activeManagerIds(organizationId: string): Promise<string[]> {
    if (!isUuid(organizationId)) {
      return [];
    }
    const rows = await this.tx.manager.query<Array<{ userId: string }>>(
      `SELECT m.user_id AS "userId" FROM organization_members m
         JOIN organizations o ON o.id = m.organization_id AND o.archived_at IS NULL
        WHERE m.organization_id = $1 AND m.status = 'active' AND m.role IN ('owner', 'admin')
        ORDER BY m.role = 'owner' DESC, m.joined_at, m.user_id`,
      [organizationId],
    );
    return rows.map((row) => row.userId);
  }
}
