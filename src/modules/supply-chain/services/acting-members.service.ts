import { Injectable } from '@nestjs/common';
import type { OrganizationRole } from '../../tenancy/entities/organization-member.entity.js';
import { hasOrgRole } from '../../tenancy/policies/organization-roles.js';
import { OrganizationAccessService } from '../../tenancy/services/organization-access.service.js';
import { OrganizationDirectoryService } from '../../tenancy/services/organization-directory.service.js';

/**
 * Server-side supply-chain work is done for a person — the binding's creator (propagation writes, sync-request
 * mails, binding decisions) or the connection's creator (catalog reads, approval requests) — who may have left the
 * organization, been suspended or demoted since. This decides who it is done for instead (docs/supply-chain.md,
 * "Who the propagation acts as, who is told"): never someone who is not an active member of the organization.
 */
@Injectable()
export class ActingMembers {
  constructor(
    private readonly access: OrganizationAccessService,
    private readonly organizations: OrganizationDirectoryService,
  ) {}

  /**
   * Who a system write (or read) for `userId` in the organization acts as: that user while an active member who may
   * write rows (owner, admin, member), else the organization's owner — always an active member, and the one
   * accountable for its data. Null only for an unknown or archived organization.
   */
  async actor(organizationId: string, userId: string): Promise<string | null> {
    if (await this.holds(organizationId, userId, 'member')) {
      return userId;
    }
    return this.organizations.ownerId(organizationId);
  }

  /**
   * Who is told about something `userId` would be told about: that user while an active member holding `minimum`
   * (the role needed to act on it), else every active owner and admin of the organization.
   */
  async recipients(organizationId: string, userId: string, minimum: OrganizationRole): Promise<string[]> {
    if (await this.holds(organizationId, userId, minimum)) {
      return [userId];
    }
    return this.organizations.activeManagerIds(organizationId);
  }

  private async holds(organizationId: string, userId: string, minimum: OrganizationRole): Promise<boolean> {
    const membership = await this.access.find(userId, organizationId);
    return membership?.status === 'active' && hasOrgRole(membership.role, minimum);
  }
}
