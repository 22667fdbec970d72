import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { MemberStatus, OrganizationRole } from '../entities/organization-member.entity.js';
import type { WorkspaceRole } from '../entities/workspace-member.entity.js';

export interface WorkspaceAccess {
  organizationId: string;
  workspaceId: string;
  organizationRole: OrganizationRole | null;
  workspaceRole: WorkspaceRole | null;
  /** Archived workspaces are read-only for everyone. */
  archived: boolean;
  canRead: boolean;
  /** Create, edit and delete documents and rows. */
  canWrite: boolean;
  /** Manage the workspace: members, settings, metadata of its documents. */
  canManage: boolean;
}

interface AccessRow {
  organization_id: string;
  workspace_id: string;
  visibility: string;
  archived: boolean;
  org_role: OrganizationRole | null;
  org_status: MemberStatus | null;
  ws_role: WorkspaceRole | null;
  ws_status: MemberStatus | null;
}

/**
 * The one answer to "what may this user do in this workspace", used by every module that keeps data in
 * workspaces. Rules (spec 2.3, 5.11): organization owner/admin may do everything; workspace owner manages;
 * editor writes; viewer reads; members of the organization read `public` workspaces; suspended members
 * (of the organization or the workspace) can do nothing; archived workspaces are read-only.
 * Unknown, deleted or archived-organization workspaces are NOT_FOUND, so ids of other tenants leak nothing.
 */
@Injectable()
export class WorkspaceAccessService {
  constructor(private readonly tx: TransactionHost) {}

  async resolve(userId: string, workspaceId: string): Promise<WorkspaceAccess> {
    const rows = await this.tx.manager.query<AccessRow[]>(
      `SELECT w.organization_id, w.id AS workspace_id, w.visibility, (w.archived_at IS NOT NULL) AS archived,
              om.role AS org_role, om.status AS org_status, wm.role AS ws_role, wm.status AS ws_status
         FROM workspaces w
         JOIN organizations o ON o.id = w.organization_id AND o.archived_at IS NULL
         LEFT JOIN organization_members om ON om.organization_id = w.organization_id AND om.user_id = $2
         LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = $2
        WHERE w.id = $1 AND w.deleted_at IS NULL`,
      [workspaceId, userId],
    );
    const row = rows[0];
    if (!row || !row.org_role) {
      throw AppException.notFound('workspace');
    }
    return accessOf(row);
  }

  /** Like resolve(), but refuses with FORBIDDEN unless the caller may do `need`. */
  async require(userId: string, workspaceId: string, need: 'read' | 'write' | 'manage'): Promise<WorkspaceAccess> {
    const access = await this.resolve(userId, workspaceId);
    const allowed = need === 'read' ? access.canRead : need === 'write' ? access.canWrite : access.canManage;
    if (!allowed) {
      throw AppException.forbidden(access.archived && need !== 'read' ? 'workspace is archived' : `${need} permission required`);
    }
    return access;
  }
}

export function accessOf(row: AccessRow): WorkspaceAccess {
  const orgActive = row.org_status === 'active';
  const wsActive = row.ws_status === 'active';
  const orgAdmin = orgActive && (row.org_role === 'owner' || row.org_role === 'admin');
  const wsRole = wsActive ? row.ws_role : null;
  const canRead = orgAdmin || (orgActive && (wsRole !== null || row.visibility === 'public'));
  const writer = orgAdmin || (orgActive && (wsRole === 'owner' || wsRole === 'editor'));
  const manager = orgAdmin || (orgActive && wsRole === 'owner');
  return {
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    organizationRole: row.org_role,
    workspaceRole: row.ws_role,
    archived: row.archived,
    canRead,
    canWrite: writer && !row.archived,
    canManage: manager && !row.archived,
  };
}
