import { IsNull, Not } from 'typeorm';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { mapPgError } from '../../../common/errors/pg-error.mapper.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OutboxService } from '../../events/outbox.service.js';
import { type CreateWorkspaceDto, type UpdateWorkspaceDto, type WorkspaceQueryDto, WorkspaceResponseDto } from '../dtos/workspace.dto.js';
import type { MemberStatus } from '../entities/organization-member.entity.js';
import { WorkspaceMemberEntity, type WorkspaceRole } from '../entities/workspace-member.entity.js';
import { WorkspaceEntity, type WorkspaceVisibility } from '../entities/workspace.entity.js';
import { isOrgAdmin } from '../policies/organization-roles.js';
import { DataSourceReferencesService } from './data-source-references.service.js';
import { OrganizationAccessService } from './organization-access.service.js';
import { UserDefaultsService } from './user-defaults.service.js';
import { accessOf, type WorkspaceAccess, WorkspaceAccessService } from './workspace-access.service.js';

interface ListedRow {
  id: string;
  ws_role: WorkspaceRole | null;
  ws_status: MemberStatus | null;
}

/** Workspaces (spec 2.3, 3, 4.3): create, list what the caller may access, get, update, delete, archive, restore. */
@Injectable()
export class WorkspacesService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly orgAccess: OrganizationAccessService,
    private readonly access: WorkspaceAccessService,
    private readonly references: DataSourceReferencesService,
    private readonly defaults: UserDefaultsService,
    private readonly outbox: OutboxService,
  ) {}

  async create(principal: Principal, organizationId: string, dto: CreateWorkspaceDto): Promise<WorkspaceResponseDto> {
    try {
      return await this.tx.run(async () => {
        await this.orgAccess.require(principal.userId, organizationId, 'admin');
        // The creator becomes a workspace member below: keep their organization membership from ending meanwhile.
        if (!(await this.orgAccess.holdMembership(principal.userId, organizationId))) {
          throw AppException.notFound('organization');
        }
        await this.requireFreeSlug(organizationId, dto.slug);
        const workspace = this.tx.manager.create(WorkspaceEntity, {
          organizationId,
          name: dto.name.trim(),
          slug: dto.slug,
          description: dto.description ?? null,
          icon: dto.icon ?? null,
          color: dto.color ?? null,
          visibility: dto.visibility ?? 'private',
          isDefault: false,
          createdBy: principal.userId,
        });
        await this.tx.manager.save(workspace);
        // The creator owns the new workspace, as with the default workspace of a new organization.
        await this.tx.manager.insert(WorkspaceMemberEntity, {
          organizationId,
          workspaceId: workspace.id,
          userId: principal.userId,
          role: 'owner',
          status: 'active',
        });
        const access = await this.access.resolve(principal.userId, workspace.id);
        if (dto.dataSourceReferences) {
          await this.references.replaceAll(principal, access, dto.dataSourceReferences);
        }
        return this.view(workspace.id, access);
      });
    } catch (error) {
      throw slugConflict(error) ?? error;
    }
  }

  async list(principal: Principal, organizationId: string, query: WorkspaceQueryDto): Promise<Page<WorkspaceResponseDto>> {
    const caller = await this.orgAccess.require(principal.userId, organizationId, 'guest');
    const admin = isOrgAdmin(caller.role);
    const from = `FROM workspaces w
                  LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = $2
                 WHERE w.organization_id = $1 AND w.deleted_at IS NULL
                   AND ($3::boolean OR w.archived_at IS NULL)
                   AND ($4::text IS NULL OR w.visibility = $4)
                   AND ($5::boolean OR w.visibility = 'public' OR wm.status = 'active')`;
    const params = [organizationId, principal.userId, query.includeArchived === true, query.visibility ?? null, admin];
    const rows = await this.tx.manager.query<ListedRow[]>(
      `SELECT w.id, wm.role AS ws_role, wm.status AS ws_status ${from}
        ORDER BY w.is_default DESC, w.created_at, w.id LIMIT $6 OFFSET $7`,
      [...params, query.pageSize, offsetOf(query)],
    );
    const [count] = await this.tx.manager.query<Array<{ n: number }>>(`SELECT count(*)::int AS n ${from}`, params);
    const workspaces = await this.load(rows.map((r) => r.id));
    const refs = await this.references.listFor(rows.map((r) => r.id));
    const items = rows.flatMap((row) => {
      const ws = workspaces.get(row.id);
      if (!ws) {
        return [];
      }
      const access = accessOf({
        organization_id: organizationId,
        workspace_id: ws.id,
        visibility: ws.visibility,
        archived: ws.archivedAt !== null,
        org_role: caller.role,
        org_status: caller.status,
        ws_role: row.ws_role,
        ws_status: row.ws_status,
      });
      return [WorkspaceResponseDto.from(ws, access, refs.get(ws.id) ?? [])];
    });
    return pageOf(items, count.n, query);
  }

  async get(principal: Principal, organizationId: string, workspaceId: string): Promise<WorkspaceResponseDto> {
    const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'read');
    return this.view(workspaceId, access);
  }

  async update(principal: Principal, organizationId: string, workspaceId: string, dto: UpdateWorkspaceDto): Promise<WorkspaceResponseDto> {
    return this.tx.run(async () => {
      const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      await this.requireOwnIdentity(workspaceId, dto);
      const changes: Partial<Pick<WorkspaceEntity, 'name' | 'description' | 'icon' | 'color' | 'visibility'>> = {};
      if (dto.name !== undefined) {
        changes.name = dto.name.trim();
      }
      for (const key of ['description', 'icon', 'color'] as const) {
        if (dto[key] !== undefined) {
          changes[key] = dto[key] ?? null;
        }
      }
      if (dto.visibility !== undefined) {
        changes.visibility = dto.visibility satisfies WorkspaceVisibility;
      }
      if (Object.keys(changes).length > 0) {
        await this.tx.manager.update(WorkspaceEntity, { id: workspaceId }, changes);
      }
      if (changes.visibility === 'private') {
        // Organization members outside the workspace lose read access: their default may not keep pointing here.
        await this.defaults.clearUnreadable({ workspaceId });
      }
      if (dto.dataSourceReferences !== undefined) {
        await this.references.replaceAll(principal, access, dto.dataSourceReferences);
      }
      return this.view(workspaceId, await this.access.resolve(principal.userId, workspaceId));
    });
  }

  /** Soft delete (workspace owner or organization owner); the workspace and its data disappear for everyone. */
  async remove(principal: Principal, organizationId: string, workspaceId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.access.requireIn(principal.userId, organizationId, workspaceId, 'delete');
      // Conditional: of two deletes at once, one deletes (and records the event); the other finds nothing.
      const deleted = await this.tx.manager.update(WorkspaceEntity, { id: workspaceId, deletedAt: IsNull() }, { deletedAt: new Date() });
      if (!deleted.affected) {
        throw AppException.notFound('workspace');
      }
      await this.defaults.clearWorkspace(workspaceId);
      await this.outbox.record({ event: 'workspace_deleted', organizationId, workspaceId, triggeredBy: principal.userId, payload: { workspaceId } });
      return null;
    });
  }

  async archive(principal: Principal, organizationId: string, workspaceId: string): Promise<WorkspaceResponseDto> {
    return this.setArchived(principal, organizationId, workspaceId, true);
  }

  async restore(principal: Principal, organizationId: string, workspaceId: string): Promise<WorkspaceResponseDto> {
    return this.setArchived(principal, organizationId, workspaceId, false);
  }

  private async setArchived(principal: Principal, organizationId: string, workspaceId: string, archived: boolean): Promise<WorkspaceResponseDto> {
    return this.tx.run(async () => {
      const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'archive');
      if (access.archived === archived) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ reason: archived ? 'the workspace is already archived' : 'the workspace is not archived' }],
        });
      }
      // Conditional on the state read above: of two archives (or restores) at once, the second is INVALID_STATE.
      const changed = await this.tx.manager.update(
        WorkspaceEntity,
        { id: workspaceId, deletedAt: IsNull(), archivedAt: archived ? IsNull() : Not(IsNull()) },
        { archivedAt: archived ? new Date() : null },
      );
      if (!changed.affected) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ reason: archived ? 'the workspace is already archived' : 'the workspace is not archived' }],
        });
      }
      return this.view(workspaceId, await this.access.resolve(principal.userId, workspaceId));
    });
  }

  /** A PATCH body that is the workspace as read: `id` and `slug`, when sent, must be this workspace's. */
  private async requireOwnIdentity(workspaceId: string, dto: UpdateWorkspaceDto): Promise<void> {
    if (dto.id === undefined && dto.slug === undefined) {
      return;
    }
    const ws = await this.tx.manager.findOneByOrFail(WorkspaceEntity, { id: workspaceId });
    const problems: Array<{ field: string; reason: string }> = [];
    // Ids compare case-insensitively (PostgreSQL answers them in lower case); slugs are unique case-insensitively.
    if (dto.id !== undefined && (typeof dto.id !== 'string' || dto.id.toLowerCase() !== ws.id)) {
      problems.push({ field: 'id', reason: 'must be the id in the path' });
    }
    if (dto.slug !== undefined && (typeof dto.slug !== 'string' || dto.slug.toLowerCase() !== ws.slug.toLowerCase())) {
      problems.push({ field: 'slug', reason: 'the slug of a workspace cannot change' });
    }
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
  }

  private async view(workspaceId: string, access: WorkspaceAccess): Promise<WorkspaceResponseDto> {
    const ws = await this.tx.manager.findOneByOrFail(WorkspaceEntity, { id: workspaceId });
    const refs = await this.references.listFor([workspaceId]);
    return WorkspaceResponseDto.from(ws, access, refs.get(workspaceId) ?? []);
  }

  private async load(ids: string[]): Promise<Map<string, WorkspaceEntity>> {
    if (ids.length === 0) {
      return new Map();
    }
    const rows = await this.tx.manager.createQueryBuilder(WorkspaceEntity, 'w').where('w.id IN (:...ids)', { ids }).getMany();
    return new Map(rows.map((w) => [w.id, w]));
  }

  private async requireFreeSlug(organizationId: string, slug: string): Promise<void> {
    const rows = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM workspaces WHERE organization_id = $1 AND lower(slug) = lower($2) AND deleted_at IS NULL`,
      [organizationId, slug],
    );
    if (rows.length > 0) {
      throw slugTaken();
    }
  }
}

function slugTaken(): AppException {
  return new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'slug', reason: 'this slug is already used in the organization' }] });
}

/** Two creates racing for one slug: the unique index decides and the loser gets the same answer. */
function slugConflict(error: unknown): AppException | undefined {
  return mapPgError(error)?.options.details?.[0]?.field === 'workspaces_slug_uq' ? slugTaken() : undefined;
}
