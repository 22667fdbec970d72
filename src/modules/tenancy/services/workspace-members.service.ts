import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type {
  AddWorkspaceMemberDto,
  UpdateWorkspaceMemberDto,
  WorkspaceMemberQueryDto,
  WorkspaceMemberResponseDto,
} from '../dtos/workspace-member.dto.js';
import { isoRequired } from '../dtos/tenancy-common.dto.js';
import type { MemberStatus } from '../entities/organization-member.entity.js';
import { WorkspaceMemberEntity, type WorkspaceRole } from '../entities/workspace-member.entity.js';
import { isUuid } from '../policies/organization-roles.js';
import { OrganizationAccessService } from './organization-access.service.js';
import { UserDefaultsService } from './user-defaults.service.js';
import { WorkspaceAccessService } from './workspace-access.service.js';
import { sameUuid } from '../../../common/uuids.js';

interface WorkspaceMemberRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  status: MemberStatus;
  joined_at: Date;
  updated_at: Date;
  email: string;
  display_name: string;
  avatar_url: string | null;
}

const SELECT = `SELECT m.id, m.organization_id, m.workspace_id, m.user_id, m.role, m.status, m.joined_at, m.updated_at,
                       u.email, u.display_name, u.avatar_url
                  FROM workspace_members m JOIN users u ON u.id = m.user_id`;

/**
 * Workspace members (spec 2.3, 4.3): readers of the workspace list and get them; the workspace owner or
 * an organization owner/admin adds, updates and removes them (not while the workspace is archived).
 */
@Injectable()
export class WorkspaceMembersService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: WorkspaceAccessService,
    private readonly organizations: OrganizationAccessService,
    private readonly defaults: UserDefaultsService,
  ) {}

  async list(principal: Principal, organizationId: string, workspaceId: string, query: WorkspaceMemberQueryDto): Promise<Page<WorkspaceMemberResponseDto>> {
    await this.access.requireIn(principal.userId, organizationId, workspaceId, 'read');
    const where = `WHERE m.workspace_id = $1 AND ($2::text IS NULL OR m.role = $2) AND ($3::text IS NULL OR m.status = $3)`;
    const params = [workspaceId, query.role ?? null, query.status ?? null];
    const rows = await this.tx.manager.query<WorkspaceMemberRow[]>(`${SELECT} ${where} ORDER BY m.joined_at, m.id LIMIT $4 OFFSET $5`, [
      ...params,
      query.pageSize,
      offsetOf(query),
    ]);
    const [count] = await this.tx.manager.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM workspace_members m ${where}`, params);
    return pageOf(rows.map(workspaceMemberOf), count.n, query);
  }

  async get(principal: Principal, organizationId: string, workspaceId: string, memberId: string): Promise<WorkspaceMemberResponseDto> {
    await this.access.requireIn(principal.userId, organizationId, workspaceId, 'read');
    return workspaceMemberOf(await this.find(workspaceId, memberId));
  }

  async add(principal: Principal, organizationId: string, workspaceId: string, dto: AddWorkspaceMemberDto): Promise<WorkspaceMemberResponseDto> {
    return this.tx.run(async () => {
      await this.serializeChanges(workspaceId);
      const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      if (!(await this.organizations.holdMembership(dto.userId, access.organizationId))) {
        throw AppException.validation([{ field: 'userId', reason: 'the user must be a member of the organization first' }]);
      }
      // Adds of one user to one workspace run one after another: a concurrent second add then sees the first's row
      // and answers ALREADY_MEMBER with its memberId, rather than failing on the unique key (ALREADY_EXISTS).
      await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
        `workspace-member:${access.workspaceId}:${dto.userId.toLowerCase()}`,
      ]);
      const existing = await this.tx.manager.findOne(WorkspaceMemberEntity, { where: { workspaceId, userId: dto.userId } });
      if (existing) {
        throw new AppException(ErrorCode.ALREADY_MEMBER, {
          details: [{ field: 'userId', reason: 'already a member of this workspace' }],
          payload: { memberId: existing.id },
        });
      }
      const member = this.tx.manager.create(WorkspaceMemberEntity, {
        organizationId: access.organizationId,
        workspaceId,
        userId: dto.userId,
        role: dto.role ?? 'editor',
        status: 'active',
      });
      await this.tx.manager.save(member);
      return workspaceMemberOf(await this.find(workspaceId, member.id));
    });
  }

  async update(
    principal: Principal,
    organizationId: string,
    workspaceId: string,
    memberId: string,
    dto: UpdateWorkspaceMemberDto,
  ): Promise<WorkspaceMemberResponseDto> {
    return this.tx.run(async () => {
      await this.serializeChanges(workspaceId);
      await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      const member = await this.find(workspaceId, memberId, true);
      requireOwnIdentity(member, dto);
      const changes: Partial<Pick<WorkspaceMemberEntity, 'role' | 'status'>> = {};
      if (dto.role !== undefined && dto.role !== member.role) {
        changes.role = dto.role;
      }
      if (dto.status !== undefined && dto.status !== member.status) {
        changes.status = dto.status;
      }
      if (Object.keys(changes).length > 0) {
        await this.tx.manager.update(WorkspaceMemberEntity, { id: member.id }, changes);
        // A suspension ends read access to a private workspace: drop it as the member's default.
        await this.defaults.clearUnreadable({ workspaceId, userId: member.user_id });
      }
      return workspaceMemberOf(await this.find(workspaceId, memberId));
    });
  }

  async remove(principal: Principal, organizationId: string, workspaceId: string, memberId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.serializeChanges(workspaceId);
      await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      const member = await this.find(workspaceId, memberId, true);
      await this.tx.manager.delete(WorkspaceMemberEntity, { id: member.id });
      await this.defaults.clearWorkspace(workspaceId, member.user_id);
      return null;
    });
  }

  /**
   * Member changes of one workspace (add, PATCH, DELETE) run one after another, each checking its caller's access
   * only once the one before committed (a transaction-scoped advisory lock taken before the check, and before any row
   * lock). Checked first and serialized only on the target row, two workspace owners demoting or removing each other
   * at once both succeeded, each with a role the other had just taken away; now the second answers as a non-owner.
   */
  private async serializeChanges(workspaceId: string): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`workspace-members:${workspaceId.toLowerCase()}`]);
  }

  private async find(workspaceId: string, memberId: string, lock = false): Promise<WorkspaceMemberRow> {
    if (!isUuid(memberId)) {
      throw AppException.notFound('workspace member');
    }
    const rows = await this.tx.manager.query<WorkspaceMemberRow[]>(
      `${SELECT} WHERE m.workspace_id = $1 AND m.id = $2${lock ? ' FOR UPDATE OF m' : ''}`,
      [workspaceId, memberId],
    );
    if (!rows[0]) {
      throw AppException.notFound('workspace member');
    }
    return rows[0];
  }
}

/** A PATCH body that is the workspace member as read: `id` and `userId`, when sent, must be this member's. */
function requireOwnIdentity(member: WorkspaceMemberRow, dto: UpdateWorkspaceMemberDto): void {
  const problems: Array<{ field: string; reason: string }> = [];
  if (dto.id !== undefined && !sameUuid(dto.id, member.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.userId !== undefined && !sameUuid(dto.userId, member.user_id)) {
    problems.push({ field: 'userId', reason: "must be this member's user (a membership never moves to another user)" });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}

function workspaceMemberOf(row: WorkspaceMemberRow): WorkspaceMemberResponseDto {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    userId: row.user_id,
    user: { id: row.user_id, email: row.email, displayName: row.display_name, avatarUrl: row.avatar_url },
    role: row.role,
    status: row.status,
    joinedAt: isoRequired(row.joined_at),
    updatedAt: isoRequired(row.updated_at),
  };
}
