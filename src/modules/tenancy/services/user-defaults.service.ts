import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UsersService } from '../../identity/services/users.service.js';
import { isUuid } from '../policies/organization-roles.js';
import { WorkspaceAccessService } from './workspace-access.service.js';

/**
 * Keeps users' default organization and workspace (spec 2.1) pointing at places they may use:
 * validates PATCH /users/me, and clears defaults when a membership ends or a tenant is archived/deleted.
 */
@Injectable()
export class UserDefaultsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly workspaces: WorkspaceAccessService,
  ) {}

  /** The ProfileService hook: a new default must be an organization/workspace the user belongs to. */
  async validate(userId: string, organizationId?: string, workspaceId?: string): Promise<void> {
    if (organizationId !== undefined && !(await this.isActiveMember(userId, organizationId))) {
      throw AppException.validation([{ field: 'defaultOrganizationId', reason: 'you are not an active member of this organization' }]);
    }
    if (workspaceId === undefined) {
      return;
    }
    const access = isUuid(workspaceId) ? await this.workspaces.resolve(userId, workspaceId).catch(() => null) : null;
    if (!access?.canRead) {
      throw AppException.validation([{ field: 'defaultWorkspaceId', reason: 'you cannot access this workspace' }]);
    }
    const targetOrganization = organizationId ?? (await this.users.getById(userId)).defaultOrganizationId;
    if (access.organizationId !== targetOrganization) {
      throw AppException.validation([
        { field: 'defaultWorkspaceId', reason: 'the workspace belongs to another organization than the default organization' },
      ]);
    }
  }

  /** Clears defaults that point into `organizationId` (for one user, or for everyone when archived). */
  async clearOrganization(organizationId: string, userId?: string): Promise<void> {
    await this.users.clearDefaultOrganization(organizationId, userId);
  }

  /** Clears the default workspace of everyone (or one user) whose default it is. */
  async clearWorkspace(workspaceId: string, userId?: string): Promise<void> {
    await this.users.clearDefaultWorkspace(workspaceId, userId);
  }

  private async isActiveMember(userId: string, organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) {
      return false;
    }
    const rows = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM organization_members m JOIN organizations o ON o.id = m.organization_id AND o.archived_at IS NULL
        WHERE m.organization_id = $1 AND m.user_id = $2 AND m.status = 'active'`,
      [organizationId, userId],
    );
    return rows.length > 0;
  }
}
