import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { MemberStatus, OrganizationRole } from '../entities/organization-member.entity.js';
import { hasOrgRole, isUuid } from '../policies/organization-roles.js';

export interface OrganizationAccess {
  organizationId: string;
  ownerId: string;
  memberId: string;
  role: OrganizationRole;
  status: MemberStatus;
}

interface MembershipRow {
  organization_id: string;
  owner_id: string;
  member_id: string | null;
  role: OrganizationRole | null;
  status: MemberStatus | null;
}

/**
 * "What may this user do in this organization". Unknown, archived, or not-a-member organizations are
 * NOT_FOUND (another tenant's ids leak nothing); suspended members and too-low roles are FORBIDDEN.
 */
@Injectable()
export class OrganizationAccessService {
  private readonly activeOrganizations: TtlCache<string, string[]>;

  constructor(
    private readonly tx: TransactionHost,
    private readonly accessChanges: AccessChangeListener,
  ) {
    this.activeOrganizations = accessChanges.createCache();
  }

  /** The membership of `userId`, or null when the organization is unknown/archived or the user is no member. */
  async find(userId: string, organizationId: string, lock = false): Promise<OrganizationAccess | null> {
    if (!isUuid(organizationId)) {
      return null;
    }
    // The lock is its own statement so the membership below is read after it is granted. Locked in one join,
    // PostgreSQL would recheck only the organization row once a concurrent holder commits and hand back the
    // membership as it was before (a caller whose ownership was just transferred away would still read owner).
    if (lock && !(await this.lockOrganization(organizationId))) {
      return null;
    }
    const rows = await this.tx.manager.query<MembershipRow[]>(
      `SELECT o.id AS organization_id, o.owner_id, m.id AS member_id, m.role, m.status
         FROM organizations o
         JOIN organization_members m ON m.organization_id = o.id AND m.user_id = $2
        WHERE o.id = $1 AND o.archived_at IS NULL`,
      [organizationId, userId],
    );
    const row = rows[0];
    if (!row?.member_id || !row.role || !row.status) {
      return null;
    }
    return { organizationId: row.organization_id, ownerId: row.owner_id, memberId: row.member_id, role: row.role, status: row.status };
  }

  /**
   * Refuses unless the caller is an active member with at least `minimum`. `lock` takes a row lock on the
   * organization so concurrent membership changes (ownership transfer, role changes, removal, leave, archive)
   * serialize, and checks the caller's membership as it is once the lock is held.
   */
  async require(userId: string, organizationId: string, minimum: OrganizationRole = 'guest', lock = false): Promise<OrganizationAccess> {
    const access = await this.find(userId, organizationId, lock);
    if (!access) {
      throw AppException.notFound('organization');
    }
    if (access.status !== 'active') {
      throw AppException.forbidden('your membership of this organization is suspended');
    }
    if (!hasOrgRole(access.role, minimum)) {
      throw AppException.forbidden(`organization role ${minimum} or higher required`);
    }
    return access;
  }

  /**
   * Locks the organization row (`FOR UPDATE`) until the transaction ends; false when it is unknown or archived.
   * Every path that changes who is a member takes this lock first, before any other row lock (join request,
   * invitation, membership), so they serialize in one order and never deadlock. Creating a join request locks the
   * same row `FOR SHARE`: it waits for (and then sees) a membership being added, or is waited for and then settled.
   */
  async lockOrganization(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) {
      return false;
    }
    const locked = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM organizations WHERE id = $1 AND archived_at IS NULL FOR UPDATE`, [
      organizationId,
    ]);
    return locked.length > 0;
  }

  /**
   * Whether `userId` is a member (of any status) of the organization, holding that membership in place until the
   * transaction ends: for writes that need the membership to stay, such as adding a workspace member. Share locks on
   * the organization row (taken first, as every locking path does, so no deadlock) and on the member row conflict
   * with the locks leave and removal take, so either this write waits and then sees the membership gone, or the
   * removal waits and then deletes what this write added.
   */
  async holdMembership(userId: string, organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) {
      return false;
    }
    const organization = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM organizations WHERE id = $1 AND archived_at IS NULL FOR SHARE`, [
      organizationId,
    ]);
    if (organization.length === 0) {
      return false;
    }
    const member = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM organization_members WHERE organization_id = $1 AND user_id = $2 FOR KEY SHARE`,
      [organizationId, userId],
    );
    return member.length > 0;
  }

  /**
   * The organizations (not archived) in which the user is an active member: the tenants a lookup without an
   * explicit context may search, so its cost and its answer never depend on other tenants' data.
   */
  async activeOrganizationIds(userId: string): Promise<string[]> {
    if (this.accessChanges.active && !this.tx.inTransaction) {
      return this.activeOrganizations.getOrLoad(userId, () => this.loadActiveOrganizationIds(userId));
    }
    return this.loadActiveOrganizationIds(userId);
  }

  private async loadActiveOrganizationIds(userId: string): Promise<string[]> {
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      `SELECT o.id FROM organization_members m JOIN organizations o ON o.id = m.organization_id AND o.archived_at IS NULL
        WHERE m.user_id = $1 AND m.status = 'active'`,
      [userId],
    );
    return rows.map((row) => row.id);
  }

  /** The organization exists and is not archived (no membership needed: join requests). */
  async exists(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) {
      return false;
    }
    const rows = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM organizations WHERE id = $1 AND archived_at IS NULL`, [organizationId]);
    return rows.length > 0;
  }
}
