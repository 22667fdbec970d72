import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { UserEntity } from '../../identity/entities/user.entity.js';
import { UsersService } from '../../identity/services/users.service.js';
import { OrganizationEntity, type OrganizationType } from '../entities/organization.entity.js';
import { OrganizationMemberEntity } from '../entities/organization-member.entity.js';
import { WorkspaceEntity } from '../entities/workspace.entity.js';
import { WorkspaceMemberEntity } from '../entities/workspace-member.entity.js';
import { personalOrganizationName } from '../policies/organization-name.js';

export interface NewOrganization {
  name: string;
  slug: string;
  displayName?: string | null;
  description?: string | null;
  type: OrganizationType;
  settings?: Record<string, unknown>;
}

/**
 * Creates an organization the way the spec requires: the creator becomes `owner` and one default
 * workspace (owned by the creator) is created, all in one transaction.
 */
@Injectable()
export class OrganizationProvisioningService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
  ) {}

  async create(creatorId: string, input: NewOrganization): Promise<{ organization: OrganizationEntity; workspace: WorkspaceEntity }> {
    return this.tx.run(async () => {
      const m = this.tx.manager;
      const organization = m.create(OrganizationEntity, {
        name: input.name,
        slug: input.slug,
        displayName: input.displayName ?? null,
        description: input.description ?? null,
        type: input.type,
        settings: input.settings ?? {},
        ownerId: creatorId,
        createdBy: creatorId,
      });
      await m.save(organization);
      await m.insert(OrganizationMemberEntity, { organizationId: organization.id, userId: creatorId, role: 'owner', status: 'active' });
      const workspace = m.create(WorkspaceEntity, {
        organizationId: organization.id,
        name: 'Default',
        slug: 'default',
        visibility: 'private',
        isDefault: true,
        createdBy: creatorId,
      });
      await m.save(workspace);
      await m.insert(WorkspaceMemberEntity, {
        organizationId: organization.id,
        workspaceId: workspace.id,
        userId: creatorId,
        role: 'owner',
        status: 'active',
      });
      return { organization, workspace };
    });
  }

  /** Registration hook: the personal organization, set as the user's default. */
  async createPersonal(user: UserEntity): Promise<void> {
    const base = user.email.split('@')[0].toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'user';
    const { organization, workspace } = await this.create(user.id, {
      name: personalOrganizationName(user.displayName),
      slug: `${base}-${randomBytes(4).toString('hex')}`,
      type: 'personal',
    });
    await this.users.setDefaults(user.id, organization.id, workspace.id);
  }
}
