import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import type {
  ApproveJoinRequestDto,
  CreateJoinRequestDto,
  JoinRequestQueryDto,
  JoinRequestResponseDto,
  RejectJoinRequestDto,
} from '../dtos/join-request.dto.js';
import { iso, isoRequired } from '../dtos/tenancy-common.dto.js';
import { JoinRequestEntity } from '../entities/join-request.entity.js';
import type { GrantableRole } from '../entities/organization-invitation.entity.js';
import { OrganizationMemberEntity } from '../entities/organization-member.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { organizationLabel } from '../policies/organization-name.js';
import { effectiveSettings, isOrgAdmin, isUuid } from '../policies/organization-roles.js';
import { OrganizationAccessService } from './organization-access.service.js';
import { OrganizationMembersService } from './organization-members.service.js';

/**
 * Join requests (spec 2.4, 3, 4.2): a non-member asks, an owner/admin approves (member created) or rejects
 * (note required), the applicant may cancel while pending. The applicant is notified of the outcome.
 */
@Injectable()
export class JoinRequestsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: OrganizationAccessService,
    private readonly members: OrganizationMembersService,
    private readonly users: UsersService,
    private readonly notifier: NotifierService,
  ) {}

  async create(principal: Principal, organizationId: string, dto: CreateJoinRequestDto): Promise<JoinRequestResponseDto> {
    return this.tx.run(async () => {
      // FOR SHARE on the organization row conflicts with the lock a member add takes: an add in progress is waited
      // for and its membership seen below (ALREADY_MEMBER), or the add waits for this request and settles it.
      const org = await this.activeOrganization(organizationId, true);
      const member = await this.tx.manager.findOne(OrganizationMemberEntity, { where: { organizationId, userId: principal.userId } });
      if (member) {
        throw new AppException(ErrorCode.ALREADY_MEMBER, { details: [{ reason: 'you are already a member of this organization' }] });
      }
      // An organization closed to requests answers a non-member exactly as an unknown one does.
      if (!effectiveSettings(org.settings).allowJoinRequests) {
        throw AppException.notFound('organization');
      }
      const pending = await this.tx.manager.findOne(JoinRequestEntity, { where: { organizationId, userId: principal.userId, status: 'pending' } });
      if (pending) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [{ reason: 'you already have a pending join request for this organization' }],
          payload: { joinRequestId: pending.id },
        });
      }
      const request = this.tx.manager.create(JoinRequestEntity, {
        organizationId,
        userId: principal.userId,
        message: dto.message ?? null,
        status: 'pending',
      });
      await this.tx.manager.save(request);
      return this.toDto(request);
    });
  }

  async list(principal: Principal, organizationId: string, query: JoinRequestQueryDto): Promise<Page<JoinRequestResponseDto>> {
    await this.access.require(principal.userId, organizationId, 'admin');
    const qb = this.tx.manager
      .createQueryBuilder(JoinRequestEntity, 'r')
      .where('r.organization_id = :organizationId', { organizationId })
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .take(query.pageSize)
      .skip(offsetOf(query));
    if (query.status) {
      qb.andWhere('r.status = :status', { status: query.status });
    }
    const [rows, total] = await qb.getManyAndCount();
    return pageOf(await this.toDtos(rows), total, query);
  }

  /** Owner/admin, or the applicant (who is not a member). */
  async get(principal: Principal, organizationId: string, requestId: string): Promise<JoinRequestResponseDto> {
    return this.toDto(await this.visibleRequest(principal, organizationId, requestId, false));
  }

  /** DELETE: the applicant cancels a pending request. */
  async cancel(principal: Principal, organizationId: string, requestId: string): Promise<JoinRequestResponseDto> {
    return this.tx.run(async () => {
      const request = await this.visibleRequest(principal, organizationId, requestId, true);
      if (request.userId !== principal.userId) {
        throw AppException.forbidden('only the applicant may cancel a join request');
      }
      requirePending(request);
      await this.tx.manager.update(JoinRequestEntity, { id: request.id }, { status: 'cancelled', cancelledAt: new Date() });
      return this.toDto(await this.tx.manager.findOneByOrFail(JoinRequestEntity, { id: request.id }));
    });
  }

  async approve(principal: Principal, organizationId: string, requestId: string, dto: ApproveJoinRequestDto): Promise<JoinRequestResponseDto> {
    return this.tx.run(async () => {
      // Organization row, then the request, then the membership: the order a direct add or an invitation acceptance
      // locks in too, so a racing one runs wholly before this approval (which then finds the request settled) or
      // after it (and finds the applicant a member), never deadlocking with it.
      const caller = await this.access.require(principal.userId, organizationId, 'admin', true);
      const request = await this.find(organizationId, requestId, true);
      requirePending(request);
      if (dto.role === 'owner') {
        if (caller.role !== 'owner') {
          throw AppException.forbidden('an admin cannot make anyone owner');
        }
        throw AppException.validation([{ field: 'role', reason: 'ownership changes only through transfer-ownership' }]);
      }
      const org = await this.activeOrganization(organizationId, false);
      const existing = await this.tx.manager.findOne(OrganizationMemberEntity, { where: { organizationId, userId: request.userId } });
      let role: GrantableRole | null;
      if (existing) {
        // The applicant became a member another way meanwhile: the request is settled as approved and the membership
        // stays as it is (its role recorded when it is one a request can grant), rather than pending forever.
        role = existing.role === 'owner' ? null : existing.role;
      } else {
        role = dto.role ?? effectiveSettings(org.settings).defaultJoinRole;
        await this.members.createMember(organizationId, request.userId, role, principal.userId, 'join_request');
      }
      await this.tx.manager.update(
        JoinRequestEntity,
        { id: request.id },
        { status: 'approved', role, reviewNote: dto.reviewNote ?? null, reviewedBy: principal.userId, reviewedAt: new Date() },
      );
      const updated = await this.tx.manager.findOneByOrFail(JoinRequestEntity, { id: request.id });
      await this.notifyApplicant(updated, org);
      return this.toDto(updated);
    });
  }

  async reject(principal: Principal, organizationId: string, requestId: string, dto: RejectJoinRequestDto): Promise<JoinRequestResponseDto> {
    return this.tx.run(async () => {
      await this.access.require(principal.userId, organizationId, 'admin', true);
      const request = await this.find(organizationId, requestId, true);
      requirePending(request);
      await this.tx.manager.update(
        JoinRequestEntity,
        { id: request.id },
        { status: 'rejected', reviewNote: dto.reviewNote.trim(), reviewedBy: principal.userId, reviewedAt: new Date() },
      );
      const updated = await this.tx.manager.findOneByOrFail(JoinRequestEntity, { id: request.id });
      await this.notifyApplicant(updated, await this.activeOrganization(organizationId, false));
      return this.toDto(updated);
    });
  }

  /**
   * A request the caller may see: the applicant's own, or any of the organization for its active
   * owners/admins. Non-members get the same NOT_FOUND whether or not the organization exists or is
   * archived; members with a lower role or suspended get FORBIDDEN.
   */
  private async visibleRequest(principal: Principal, organizationId: string, requestId: string, lock: boolean): Promise<JoinRequestEntity> {
    if (!(await this.access.exists(organizationId))) {
      throw AppException.notFound('join request');
    }
    const request = await this.find(organizationId, requestId, lock);
    if (request.userId === principal.userId) {
      return request;
    }
    const caller = await this.access.find(principal.userId, organizationId);
    if (!caller) {
      throw AppException.notFound('join request');
    }
    if (caller.status !== 'active' || !isOrgAdmin(caller.role)) {
      throw AppException.forbidden('only owners, admins and the applicant see a join request');
    }
    return request;
  }

  private async activeOrganization(organizationId: string, lock: boolean): Promise<OrganizationEntity> {
    const org = isUuid(organizationId)
      ? await this.tx.manager.findOne(OrganizationEntity, {
          where: { id: organizationId },
          ...(lock ? { lock: { mode: 'pessimistic_read' as const } } : {}),
        })
      : null;
    if (!org || org.archivedAt !== null) {
      throw AppException.notFound('organization');
    }
    return org;
  }

  private async find(organizationId: string, requestId: string, lock: boolean): Promise<JoinRequestEntity> {
    const request = isUuid(requestId)
      ? await this.tx.manager.findOne(JoinRequestEntity, {
          where: { id: requestId, organizationId },
          ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
        })
      : null;
    if (!request) {
      throw AppException.notFound('join request');
    }
    return request;
  }

  private async notifyApplicant(request: JoinRequestEntity, org: OrganizationEntity): Promise<void> {
    const applicant = await this.users.getById(request.userId);
    const orgName = organizationLabel(org);
    const approved = request.status === 'approved';
    await this.notifier.send({
      channel: 'email',
      to: applicant.email,
      userId: applicant.id,
      kind: approved ? 'join_request_approved' : 'join_request_rejected',
      subject: approved ? `You joined ${orgName} on Quire` : `Your request to join ${orgName} was declined`,
      body:
        (approved ? `Your request to join ${orgName} was approved; your role is ${request.role}.` : `Your request to join ${orgName} was rejected.`) +
        (request.reviewNote ? `\n\nNote from the reviewer: ${request.reviewNote}` : ''),
      data: { joinRequestId: request.id, organizationId: org.id, status: request.status, role: request.role, reviewNote: request.reviewNote },
    });
  }

  private async toDto(request: JoinRequestEntity): Promise<JoinRequestResponseDto> {
    return (await this.toDtos([request]))[0];
  }

  private async toDtos(requests: JoinRequestEntity[]): Promise<JoinRequestResponseDto[]> {
    const applicants = await this.users.summaries(requests.map((r) => r.userId));
    return requests.map((r) => ({
      id: r.id,
      organizationId: r.organizationId,
      userId: r.userId,
      applicant: applicants.get(r.userId) ?? { id: r.userId, email: '', displayName: '', avatarUrl: null },
      message: r.message,
      status: r.status,
      role: r.role,
      reviewNote: r.reviewNote,
      reviewedBy: r.reviewedBy,
      reviewedAt: iso(r.reviewedAt),
      cancelledAt: iso(r.cancelledAt),
      createdAt: isoRequired(r.createdAt),
      updatedAt: isoRequired(r.updatedAt),
    }));
  }
}

function requirePending(request: JoinRequestEntity): void {
  if (request.status !== 'pending') {
    throw new AppException(ErrorCode.INVALID_STATE, {
      details: [{ field: 'status', reason: `the join request is ${request.status}, not pending` }],
      payload: { status: request.status },
    });
  }
}
