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

  /**
   * The ProfileService hook: a new default must be an organization/workspace the user belongs to. A new default
   * organization sent without a workspace brings one along, so the pair never points into two organizations: the
   * current default workspace if it is in that organization, else the organization's default workspace, else the
   * oldest one the user can use, else none. Returns the default workspace to store when it changes that way.
   * null clears a default: clearing the organization clears the workspace too (a default workspace always lies in
   * the default organization), so a workspace sent along with a null organization is refused.
   */
  async validate(
    userId: string,
    organizationId?: string | null,
    workspaceId?: string | null,
  ): Promise<{ defaultWorkspaceId: string | null } | undefined> {
    // UUIDs compare case-insensitively; stored ids are lower case, and the checks below compare with them.
    organizationId = typeof organizationId === 'string' ? organizationId.toLowerCase() : organizationId;
    workspaceId = typeof workspaceId === 'string' ? workspaceId.toLowerCase() : workspaceId;
    if (organizationId === null) {
      if (workspaceId !== undefined && workspaceId !== null) {
        throw AppException.validation([{ field: 'defaultWorkspaceId', reason: 'a default workspace needs a default organization' }]);
      }
      return { defaultWorkspaceId: null };
    }
    if (organizationId !== undefined && !(await this.holdOrganization(userId, organizationId))) {
      throw AppException.validation([{ field: 'defaultOrganizationId', reason: 'you are not an active member of this organization' }]);
    }
    if (workspaceId === null) {
      return undefined;
    }
    if (workspaceId === undefined) {
      return organizationId === undefined ? undefined : this.workspaceFollowing(userId, organizationId);
    }
    const access = isUuid(workspaceId) && (await this.holdWorkspace(userId, workspaceId)) ? await this.workspaces.resolve(userId, workspaceId).catch(() => null) : null;
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

  private async workspaceFollowing(userId: string, organizationId: string): Promise<{ defaultWorkspaceId: string | null } | undefined> {
    const usable = async (id: string): Promise<boolean> => {
      if (!(await this.holdWorkspace(userId, id, organizationId))) {
        return false;
      }
      const access = await this.workspaces.resolve(userId, id).catch(() => null);
      return access?.canRead === true && access.organizationId === organizationId;
    };
    const current = (await this.users.getById(userId)).defaultWorkspaceId;
    if (current && (await usable(current))) {
      return undefined;
    }
    const candidates = await this.tx.manager.query<{ id: string }[]>(
      `SELECT w.id FROM workspaces w
        WHERE w.organization_id = $1 AND w.archived_at IS NULL AND w.deleted_at IS NULL
        ORDER BY w.is_default DESC, w.created_at, w.id LIMIT 50`,
      [organizationId],
    );
    for (const candidate of candidates) {
      if (await usable(candidate.id)) {
        return { defaultWorkspaceId: candidate.id };
      }
    }
    return { defaultWorkspaceId: null };
  }

  /** Clears defaults that point into `organizationId` (for one user, or for everyone when archived). */
  async clearOrganization(organizationId: string, userId?: string): Promise<void> {
    await this.users.clearDefaultOrganization(organizationId, userId);
  }

  /** Clears the default workspace of everyone (or one user) whose default it is. */
  async clearWorkspace(workspaceId: string, userId?: string): Promise<void> {
    await this.users.clearDefaultWorkspace(workspaceId, userId);
  }

  /**
   * Clears default workspaces their users may no longer read, after a change that keeps the workspace but ends
   * someone's read access: a workspace made private, a workspace or organization membership suspended, an
   * organization admin demoted. Like leaving or deletion, this leaves the user with no default workspace (the
   * no-context routes then ask for one) instead of a default every such route refuses with FORBIDDEN.
   */
  async clearUnreadable(scope: { workspaceId: string; userId?: string } | { organizationId: string; userId: string }): Promise<void> {
    for (const holder of await this.workspaces.defaultWorkspaceHolders(scope)) {
      if (!holder.access.canRead) {
        await this.users.clearDefaultWorkspace(holder.access.workspaceId, holder.userId);
      }
    }
  }

  /**
   * Whether the user is an active member of the organization, share-locking the organization row and the membership
   * until the PATCH commits. Leaving, removal, suspension, demotion and archiving lock the organization row FOR UPDATE
   * (then the membership) before they clear defaults, so they wait for this PATCH and then clear what it wrote, or
   * this check waits for them and sees the membership gone. Without the locks a default checked before a leave
   * committed was written after the leave cleared defaults: a default organization the user no longer belongs to.
   */
  private async holdOrganization(userId: string, organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) {
      return false;
    }
    await this.tx.manager.query(`SELECT 1 FROM organizations WHERE id = $1 FOR SHARE`, [organizationId]);
    await this.tx.manager.query(`SELECT 1 FROM organization_members WHERE organization_id = $1 AND user_id = $2 FOR SHARE`, [
      organizationId,
      userId,
    ]);
    return this.isActiveMember(userId, organizationId);
  }

  /**
   * Share-locks what gives the user read access to a workspace — its organization row and the user's membership
   * there, then the workspace row and the user's workspace membership, in the order the paths that end access lock
   * them (organization first) — so a removal from the workspace, its deletion or its change to private waits for the
   * PATCH and then clears the default it wrote (see holdOrganization). False for an unknown workspace, or one outside
   * `organizationId` when given (nothing of another organization is locked then).
   */
  private async holdWorkspace(userId: string, workspaceId: string, organizationId?: string): Promise<boolean> {
    const [workspace] = await this.tx.manager.query<Array<{ organization_id: string }>>(`SELECT organization_id FROM workspaces WHERE id = $1`, [
      workspaceId,
    ]);
    if (!workspace || (organizationId !== undefined && workspace.organization_id !== organizationId)) {
      return false;
    }
    await this.holdOrganization(userId, workspace.organization_id);
    await this.tx.manager.query(`SELECT 1 FROM workspaces WHERE id = $1 FOR SHARE`, [workspaceId]);
    await this.tx.manager.query(`SELECT 1 FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 FOR SHARE`, [workspaceId, userId]);
    return true;
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
