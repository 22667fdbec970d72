import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OutboxService } from '../../events/outbox.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import type { AddMemberDto, MemberQueryDto, MemberResponseDto, UpdateMemberDto } from '../dtos/member.dto.js';
import { isoRequired } from '../dtos/tenancy-common.dto.js';
import { type MemberStatus, OrganizationMemberEntity, type OrganizationRole } from '../entities/organization-member.entity.js';
import { JoinRequestEntity } from '../entities/join-request.entity.js';
import { OrganizationInvitationEntity } from '../entities/organization-invitation.entity.js';
import { WorkspaceMemberEntity } from '../entities/workspace-member.entity.js';
import { isUuid } from '../policies/organization-roles.js';
import { type OrganizationAccess, OrganizationAccessService } from './organization-access.service.js';
import { UserDefaultsService } from './user-defaults.service.js';
import { sameUuid } from '../../../common/uuids.js';

interface MemberRow {
  id: string;
  organization_id: string;
  user_id: string;
  role: OrganizationRole;
  status: MemberStatus;
  joined_at: Date;
  updated_at: Date;
  email: string;
  display_name: string;
  avatar_url: string | null;
}

const MEMBER_SELECT = `SELECT m.id, m.organization_id, m.user_id, m.role, m.status, m.joined_at, m.updated_at,
                              u.email, u.display_name, u.avatar_url
                         FROM organization_members m JOIN users u ON u.id = m.user_id`;

/** How a membership came to be, recorded in the `member_added` event. */
export type MembershipSource = 'direct' | 'invitation' | 'join_request';

/** Organization members (spec 4.2): list, add, get, update, remove; also the one place members are created. */
@Injectable()
export class OrganizationMembersService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: OrganizationAccessService,
    private readonly users: UsersService,
    private readonly outbox: OutboxService,
    private readonly defaults: UserDefaultsService,
  ) {}

  async list(principal: Principal, organizationId: string, query: MemberQueryDto): Promise<Page<MemberResponseDto>> {
    await this.access.require(principal.userId, organizationId, 'member');
    const search = query.search?.trim() ? `%${query.search.trim().replace(/[\\%_]/g, '\\$&')}%` : null;
    const where = `WHERE m.organization_id = $1
                     AND ($2::text IS NULL OR m.role = $2)
                     AND ($3::text IS NULL OR m.status = $3)
                     AND ($4::text IS NULL OR u.display_name ILIKE $4 ESCAPE '\\' OR u.email ILIKE $4 ESCAPE '\\')`;
    const params = [organizationId, query.role ?? null, query.status ?? null, search];
    const rows = await this.tx.manager.query<MemberRow[]>(`${MEMBER_SELECT} ${where} ORDER BY m.joined_at, m.id LIMIT $5 OFFSET $6`, [
      ...params,
      query.pageSize,
      offsetOf(query),
    ]);
    const [count] = await this.tx.manager.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM organization_members m JOIN users u ON u.id = m.user_id ${where}`,
      params,
    );
    return pageOf(rows.map(memberOf), count.n, query);
  }

  async get(principal: Principal, organizationId: string, memberId: string): Promise<MemberResponseDto> {
    await this.access.require(principal.userId, organizationId, 'member');
    return this.load(organizationId, memberId);
  }

  async add(principal: Principal, organizationId: string, dto: AddMemberDto): Promise<MemberResponseDto> {
    return this.tx.run(async () => {
      // Locked like every path that makes members (join-request approval, invitation acceptance, join-request
      // creation): a racing approval or request then runs wholly before or after this add, as it would sequentially.
      const caller = await this.access.require(principal.userId, organizationId, 'admin', true);
      const role = dto.role ?? 'member';
      refuseOwnerRole(caller, role);
      if (!(await this.users.findById(dto.userId))) {
        throw AppException.validation([{ field: 'userId', reason: 'no such user' }]);
      }
      return this.createMember(organizationId, dto.userId, role, principal.userId, 'direct');
    });
  }

  async update(principal: Principal, organizationId: string, memberId: string, dto: UpdateMemberDto): Promise<MemberResponseDto> {
    return this.tx.run(async () => {
      const caller = await this.access.require(principal.userId, organizationId, 'admin', true);
      const target = await this.find(organizationId, memberId);
      requireOwnIdentity(target, dto);
      // Only a change counts: the member as read, sent back with its role and status as they are, changes nothing
      // (the owner's record too).
      const changes: Partial<OrganizationMemberEntity> = {};
      if (dto.role !== undefined && dto.role !== target.role) {
        changes.role = dto.role;
      }
      if (dto.status !== undefined && dto.status !== target.status) {
        changes.status = dto.status;
      }
      if (target.role === 'owner' && Object.keys(changes).length > 0) {
        throw AppException.forbidden("the owner's role and status change only by transferring ownership");
      }
      if (changes.role !== undefined) {
        refuseOwnerRole(caller, changes.role);
      }
      if (Object.keys(changes).length > 0) {
        await this.tx.manager.update(OrganizationMemberEntity, { id: target.id }, changes);
        // A suspension, or an admin demoted, may end read access to the member's default workspace.
        await this.defaults.clearUnreadable({ organizationId, userId: target.user_id });
        await this.outbox.record({
          event: 'member_updated',
          organizationId,
          triggeredBy: principal.userId,
          payload: { memberId: target.id, userId: target.user_id, before: { role: target.role, status: target.status }, changes },
        });
      }
      return this.load(organizationId, memberId);
    });
  }

  async remove(principal: Principal, organizationId: string, memberId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.access.require(principal.userId, organizationId, 'admin', true);
      const target = await this.find(organizationId, memberId);
      if (target.role === 'owner') {
        throw AppException.forbidden('the owner cannot be removed');
      }
      await this.deleteMembership(organizationId, target.user_id, principal.userId, 'removed');
      return null;
    });
  }

  /**
   * Creates an organization member; ALREADY_MEMBER when the user already is one (of any status). Locks in the one
   * order every membership path uses: the organization row (callers that lock other rows take it before them; here
   * it is a no-op then), the applicant's pending join request, the membership.
   */
  async createMember(organizationId: string, userId: string, role: OrganizationRole, actorId: string, via: MembershipSource): Promise<MemberResponseDto> {
    if (!(await this.access.lockOrganization(organizationId))) {
      throw AppException.notFound('organization');
    }
    const existing = await this.tx.manager.findOne(OrganizationMemberEntity, { where: { organizationId, userId } });
    if (existing) {
      throw alreadyMember();
    }
    if (via !== 'join_request') {
      await this.settleJoinRequest(organizationId, userId, role, actorId);
    }
    if (via !== 'invitation') {
      await this.settleInvitation(organizationId, userId, actorId);
    }
    const member = await this.tx.manager.save(this.tx.manager.create(OrganizationMemberEntity, { organizationId, userId, role, status: 'active' }));
    await this.outbox.record({
      event: 'member_added',
      organizationId,
      triggeredBy: actorId,
      payload: { memberId: member.id, userId, role, via },
    });
    return this.load(organizationId, member.id);
  }

  /**
   * A pending join request of someone who became a member another way (direct add, invitation) is settled as
   * approved by whoever let them in, with the role they got: it would otherwise stay pending with nothing left to do.
   */
  private async settleJoinRequest(organizationId: string, userId: string, role: OrganizationRole, actorId: string): Promise<void> {
    await this.tx.manager.update(
      JoinRequestEntity,
      { organizationId, userId, status: 'pending' },
      { status: 'approved', role: role === 'owner' ? null : role, reviewedBy: actorId, reviewedAt: new Date() },
    );
  }

  /**
   * A pending invitation of someone who became a member another way (direct add, join request) is revoked by
   * whoever let them in: left pending, it would let them back in with its role after a later removal. One past its
   * expiry is left to expire (the next read or the scheduled job moves it): it had ended before anyone revoked it.
   */
  private async settleInvitation(organizationId: string, userId: string, actorId: string): Promise<void> {
    const user = await this.users.findById(userId);
    if (!user) {
      return;
    }
    await this.tx.manager
      .createQueryBuilder()
      .update(OrganizationInvitationEntity)
      .set({ status: 'revoked', revokedAt: () => 'now()', revokedBy: actorId })
      .where('organization_id = :organizationId AND status = :pending AND lower(email) = lower(:email) AND expires_at > now()', {
        organizationId,
        pending: 'pending',
        email: user.email,
      })
      .execute();
  }

  /**
   * Ends a membership: the organization member, its workspace memberships, and defaults pointing there. The member
   * row is locked first: a concurrent workspace-member add holds it (OrganizationAccessService.holdMembership), so
   * the workspace memberships are deleted only once such an add has committed, and then include what it added.
   */
  async deleteMembership(organizationId: string, userId: string, actorId: string, reason: 'removed' | 'left'): Promise<void> {
    const member = await this.tx.manager.findOne(OrganizationMemberEntity, { where: { organizationId, userId }, lock: { mode: 'pessimistic_write' } });
    if (!member) {
      return;
    }
    await this.tx.manager.delete(WorkspaceMemberEntity, { organizationId, userId });
    await this.tx.manager.delete(OrganizationMemberEntity, { id: member.id });
    await this.defaults.clearOrganization(organizationId, userId);
    await this.outbox.record({
      event: 'member_removed',
      organizationId,
      triggeredBy: actorId,
      payload: { memberId: member.id, userId, role: member.role, reason },
    });
  }

  async load(organizationId: string, memberId: string): Promise<MemberResponseDto> {
    return memberOf(await this.find(organizationId, memberId));
  }

  private async find(organizationId: string, memberId: string): Promise<MemberRow> {
    if (!isUuid(memberId)) {
      throw AppException.notFound('member');
    }
    const rows = await this.tx.manager.query<MemberRow[]>(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND m.id = $2`, [organizationId, memberId]);
    if (!rows[0]) {
      throw AppException.notFound('member');
    }
    return rows[0];
  }
}

function alreadyMember(): AppException {
  return new AppException(ErrorCode.ALREADY_MEMBER, { details: [{ field: 'userId', reason: 'already a member of this organization' }] });
}

/** A PATCH body that is the member as read: `id` and `userId`, when sent, must be this member's. */
function requireOwnIdentity(target: MemberRow, dto: UpdateMemberDto): void {
  const problems: Array<{ field: string; reason: string }> = [];
  if (dto.id !== undefined && !sameUuid(dto.id, target.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.userId !== undefined && !sameUuid(dto.userId, target.user_id)) {
    problems.push({ field: 'userId', reason: "must be this member's user (a membership never moves to another user)" });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}

/** Ownership changes only by transfer: an admin may not grant it at all, the owner is pointed to the transfer. */
function refuseOwnerRole(caller: OrganizationAccess, role: OrganizationRole): void {
  if (role !== 'owner') {
    return;
  }
  if (caller.role !== 'owner') {
    throw AppException.forbidden('an admin cannot make anyone owner');
  }
  throw AppException.validation([{ field: 'role', reason: 'ownership changes only through POST /organizations/{organizationId}/transfer-ownership' }]);
}

function memberOf(row: MemberRow): MemberResponseDto {
  return {
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    user: { id: row.user_id, email: row.email, displayName: row.display_name, avatarUrl: row.avatar_url },
    role: row.role,
    status: row.status,
    joinedAt: isoRequired(row.joined_at),
    updatedAt: isoRequired(row.updated_at),
  };
}
