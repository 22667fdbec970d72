import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { MemberStatus, OrganizationRole } from '../entities/organization-member.entity.js';
import type { WorkspaceRole } from '../entities/workspace-member.entity.js';
import type { WorkspaceVisibility } from '../entities/workspace.entity.js';
import { isUuid } from '../policies/organization-roles.js';

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
  visibility: WorkspaceVisibility;
  /** Active organization owner or admin: may do everything in every workspace of the organization. */
  isOrganizationAdmin: boolean;
  /** Archive and restore (workspace owner, organization owner/admin); allowed on archived workspaces. */
  canArchive: boolean;
  /** Soft delete (workspace owner or organization owner, spec 3); allowed on archived workspaces. */
  canDelete: boolean;
}

/**
 * What a user may do with an organization's organization-level documents (catalogs, order books: documents
 * with no workspace, spec 2.14). Every active member reads them (guests included, as they read public
 * workspaces); owners, admins and members write rows; owners and admins manage (metadata, settings).
 */
export interface OrganizationLevelAccess {
  organizationId: string;
  organizationRole: OrganizationRole;
  canRead: boolean;
  canWrite: boolean;
  canManage: boolean;
  isOrganizationAdmin: boolean;
}

/**
 * What a route needs in a workspace. `read`/`write`/`manage` are the viewer/editor/owner levels
 * (write and manage are refused on archived workspaces); `archive` and `delete` are the spec 3 rules.
 */
export type WorkspaceNeed = 'read' | 'write' | 'manage' | 'archive' | 'delete';

export interface AccessRow {
  organization_id: string;
  workspace_id: string;
  visibility: WorkspaceVisibility;
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
  /** Access rows per `user:workspace` (null: none) and organization-level roles, for AUTH_CACHE_TTL_MS at most (docs/auth.md). */
  private readonly workspaceRows: TtlCache<string, AccessRow | null>;
  private readonly organizationRows: TtlCache<string, { role: OrganizationRole; status: MemberStatus } | null>;

  constructor(
    private readonly tx: TransactionHost,
    private readonly accessChanges: AccessChangeListener,
  ) {
    this.workspaceRows = accessChanges.createCache();
    this.organizationRows = accessChanges.createCache();
  }

  /** Cached reads only outside transactions: a write path always sees the rows as they are. */
  private cached<V>(cache: TtlCache<string, V>, key: string, load: () => Promise<V>): Promise<V> {
    return this.accessChanges.active && !this.tx.inTransaction ? cache.getOrLoad(key, load) : load();
  }

  async resolve(userId: string, workspaceId: string): Promise<WorkspaceAccess> {
    const row = isUuid(workspaceId) ? await this.cached(this.workspaceRows, `${userId}:${workspaceId}`, () => this.loadAccessRow(userId, workspaceId)) : null;
    if (!row || !row.org_role) {
      throw AppException.notFound('workspace');
    }
    return accessOf(row);
  }

  /**
   * resolve() for many workspaces in one statement (uncached): the access of each one the user is a member of the
   * organization of; the others (unknown, deleted, another tenant's) are absent, as resolve() answers NOT_FOUND.
   */
  async resolveMany(userId: string, workspaceIds: readonly string[]): Promise<Map<string, WorkspaceAccess>> {
    const ids = [...new Set(workspaceIds.filter(isUuid))];
    const rows = ids.length === 0 ? [] : await this.loadAccessRows(userId, ids);
    return new Map(rows.filter((row) => row.org_role).map((row) => [row.workspace_id, accessOf(row)]));
  }

  private async loadAccessRow(userId: string, workspaceId: string): Promise<AccessRow | null> {
    return (await this.loadAccessRows(userId, [workspaceId]))[0] ?? null;
  }

  private async loadAccessRows(userId: string, workspaceIds: readonly string[]): Promise<AccessRow[]> {
    return this.tx.manager.query<AccessRow[]>(
      `SELECT w.organization_id, w.id AS workspace_id, w.visibility, (w.archived_at IS NOT NULL) AS archived,
              om.role AS org_role, om.status AS org_status, wm.role AS ws_role, wm.status AS ws_status
         FROM workspaces w
         JOIN organizations o ON o.id = w.organization_id AND o.archived_at IS NULL
         LEFT JOIN organization_members om ON om.organization_id = w.organization_id AND om.user_id = $2
         LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = $2
        WHERE w.id = ANY($1::uuid[]) AND w.deleted_at IS NULL`,
      [workspaceIds, userId],
    );
  }

  /**
   * The access of every user whose default workspace is `workspaceId` (or any workspace of `organizationId`),
   * optionally one user only: what UserDefaultsService needs to drop defaults their users can no longer read.
   * Uncached, so it sees the change the calling transaction just made.
   */
  async defaultWorkspaceHolders(
    scope: { workspaceId: string; userId?: string } | { organizationId: string; userId: string },
  ): Promise<Array<{ userId: string; access: WorkspaceAccess }>> {
    const workspaceId = 'workspaceId' in scope ? scope.workspaceId : null;
    const organizationId = 'organizationId' in scope ? scope.organizationId : null;
    const rows = await this.tx.manager.query<Array<AccessRow & { user_id: string }>>(
      `SELECT u.id AS user_id, w.organization_id, w.id AS workspace_id, w.visibility, (w.archived_at IS NOT NULL) AS archived,
              om.role AS org_role, om.status AS org_status, wm.role AS ws_role, wm.status AS ws_status
         FROM users u
         JOIN workspaces w ON w.id = u.default_workspace_id
         LEFT JOIN organization_members om ON om.organization_id = w.organization_id AND om.user_id = u.id
         LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = u.id
        WHERE ($1::uuid IS NULL OR u.default_workspace_id = $1)
          AND ($2::uuid IS NULL OR w.organization_id = $2)
          AND ($3::uuid IS NULL OR u.id = $3)`,
      [workspaceId, organizationId, scope.userId ?? null],
    );
    return rows.map((row) => ({ userId: row.user_id, access: accessOf(row) }));
  }

  /**
   * Access to the organization-level documents of an organization. Unknown or archived organizations and
   * organizations the user is no member of are NOT_FOUND, like unknown workspaces.
   */
  async resolveOrganizationLevel(userId: string, organizationId: string): Promise<OrganizationLevelAccess> {
    if (!isUuid(organizationId)) {
      throw AppException.notFound('organization');
    }
    const row = await this.cached(this.organizationRows, `${userId}:${organizationId}`, async () => {
      const rows = await this.tx.manager.query<Array<{ role: OrganizationRole; status: MemberStatus }>>(
        `SELECT om.role, om.status
           FROM organization_members om
           JOIN organizations o ON o.id = om.organization_id AND o.archived_at IS NULL
          WHERE om.organization_id = $1 AND om.user_id = $2`,
        [organizationId, userId],
      );
      return rows[0] ?? null;
    });
    if (!row) {
      throw AppException.notFound('organization');
    }
    const active = row.status === 'active';
    const admin = active && (row.role === 'owner' || row.role === 'admin');
    return {
      organizationId,
      organizationRole: row.role,
      canRead: active,
      canWrite: admin || (active && row.role === 'member'),
      canManage: admin,
      isOrganizationAdmin: admin,
    };
  }

  /** Like resolve(), but refuses with FORBIDDEN unless the caller may do `need`. */
  async require(userId: string, workspaceId: string, need: 'read' | 'write' | 'manage'): Promise<WorkspaceAccess> {
    return this.check(await this.resolve(userId, workspaceId), need);
  }

  /**
   * For routes under /organizations/{organizationId}/workspaces/{workspaceId}: a malformed id, or a
   * workspace of another organization than the path names, is NOT_FOUND; then `need` is enforced.
   */
  async requireIn(userId: string, organizationId: string, workspaceId: string, need: WorkspaceNeed): Promise<WorkspaceAccess> {
    if (!isUuid(organizationId) || !isUuid(workspaceId)) {
      throw AppException.notFound('workspace');
    }
    const access = await this.resolve(userId, workspaceId).catch(nullWhenNotFound);
    const inOrganization = access !== null && access.organizationId === organizationId;
    if (!inOrganization || !allows(access, need)) {
      // A suspended member of the organization is refused before anything of it is told (docs/tenancy.md): a real
      // workspace id and an unknown one answer alike. Only on the way to a refusal, so allowed calls pay nothing.
      await this.refuseSuspendedMember(userId, organizationId);
    }
    if (!inOrganization) {
      throw AppException.notFound('workspace');
    }
    return this.check(access, need);
  }

  private async refuseSuspendedMember(userId: string, organizationId: string): Promise<void> {
    const rights = await this.resolveOrganizationLevel(userId, organizationId).catch(nullWhenNotFound);
    if (rights && !rights.canRead) {
      throw AppException.forbidden('your membership of this organization is suspended');
    }
  }

  private check(access: WorkspaceAccess, need: WorkspaceNeed): WorkspaceAccess {
    if (!allows(access, need)) {
      const readOnly = access.archived && (need === 'write' || need === 'manage');
      throw AppException.forbidden(readOnly ? 'workspace is archived (read-only)' : `${need} permission required`);
    }
    return access;
  }
}

/** For `.catch`: a NOT_FOUND refusal becomes null; anything else (a database failure) goes on. */
function nullWhenNotFound(error: unknown): null {
  if (error instanceof AppException && error.code === ErrorCode.NOT_FOUND) {
    return null;
  }
  throw error;
}

export function allows(access: WorkspaceAccess, need: WorkspaceNeed): boolean {
  switch (need) {
    case 'read':
      return access.canRead;
    case 'write':
      return access.canWrite;
    case 'manage':
      return access.canManage;
    case 'archive':
      return access.canArchive;
    case 'delete':
      return access.canDelete;
  }
}

export function accessOf(row: AccessRow): WorkspaceAccess {
  const orgActive = row.org_status === 'active';
  const wsActive = row.ws_status === 'active';
  const orgAdmin = orgActive && (row.org_role === 'owner' || row.org_role === 'admin');
  const orgOwner = orgActive && row.org_role === 'owner';
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
    visibility: row.visibility,
    isOrganizationAdmin: orgAdmin,
    canArchive: manager,
    canDelete: orgOwner || (orgActive && wsRole === 'owner'),
  };
}
