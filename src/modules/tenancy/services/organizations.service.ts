import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { mapPgError } from '../../../common/errors/pg-error.mapper.js';
import { sameUuid } from '../../../common/uuids.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OutboxService } from '../../events/outbox.service.js';
import {
  type CreateOrganizationDto,
  OrganizationDetailDto,
  OrganizationResponseDto,
  type TransferOwnershipDto,
  type UpdateOrganizationDto,
} from '../dtos/organization.dto.js';
import { OrganizationMemberEntity, type OrganizationRole } from '../entities/organization-member.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { settingsSizeProblem } from '../policies/organization-roles.js';
import { OrganizationAccessService } from './organization-access.service.js';
import { OrganizationMembersService } from './organization-members.service.js';
import { OrganizationProvisioningService } from './organization-provisioning.service.js';
import { OrganizationStatisticsService } from './organization-statistics.service.js';
import { UserDefaultsService } from './user-defaults.service.js';

/** Organizations (spec 4.2): create, detail, update, archive (soft delete), leave, ownership transfer. */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: OrganizationAccessService,
    private readonly provisioning: OrganizationProvisioningService,
    private readonly statistics: OrganizationStatisticsService,
    private readonly members: OrganizationMembersService,
    private readonly defaults: UserDefaultsService,
    private readonly outbox: OutboxService,
  ) {}

  async create(principal: Principal, dto: CreateOrganizationDto): Promise<OrganizationDetailDto> {
    const slugTaken = () => new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'slug', reason: 'this slug is already taken' }] });
    const taken = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM organizations WHERE lower(slug) = lower($1)`, [dto.slug]);
    if (taken.length > 0) {
      throw slugTaken();
    }
    try {
      const { organization } = await this.provisioning.create(principal.userId, {
        name: dto.name.trim(),
        slug: dto.slug,
        displayName: dto.displayName ?? null,
        description: dto.description ?? null,
        type: dto.type,
        settings: dto.settings ?? {},
      });
      return this.detail(organization.id, 'owner');
    } catch (error) {
      // Two creates racing for one slug: the unique index decides, the loser gets the same clear answer.
      if (mapPgError(error)?.options.details?.[0]?.field === 'organizations_slug_uq') {
        throw slugTaken();
      }
      throw error;
    }
  }

  async get(principal: Principal, organizationId: string): Promise<OrganizationDetailDto> {
    const caller = await this.access.require(principal.userId, organizationId, 'guest');
    return this.detail(organizationId, caller.role);
  }

  async update(principal: Principal, organizationId: string, dto: UpdateOrganizationDto): Promise<OrganizationDetailDto> {
    return this.tx.run(async () => {
      const caller = await this.access.require(principal.userId, organizationId, 'admin', true);
      const org = await this.tx.manager.findOneOrFail(OrganizationEntity, { where: { id: organizationId } });
      requireOwnIdentity(org, dto);
      let changed = false;
      if (dto.name !== undefined) {
        org.name = dto.name.trim();
        changed = true;
      }
      for (const key of ['displayName', 'description', 'logoUrl'] as const) {
        if (dto[key] !== undefined) {
          org[key] = dto[key] ?? null;
          changed = true;
        }
      }
      if (dto.settings !== undefined) {
        const merged: Record<string, unknown> = { ...org.settings };
        for (const [key, value] of Object.entries(dto.settings)) {
          if (value === null) {
            delete merged[key];
          } else {
            merged[key] = value;
          }
        }
        // Each PATCH fits on its own (the DTO checks it); the merge of several must fit too.
        const tooLarge = settingsSizeProblem(merged, org.settings);
        if (tooLarge) {
          throw AppException.validation([{ field: 'settings', reason: tooLarge }]);
        }
        org.settings = merged;
        changed = true;
      }
      if (changed) {
        await this.tx.manager.save(org);
      }
      return this.detail(organizationId, caller.role);
    });
  }

  /** DELETE: owner only; the organization is archived, hidden from lists and refused to everyone afterwards. */
  async archive(principal: Principal, organizationId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.access.require(principal.userId, organizationId, 'owner', true);
      await this.tx.manager.update(OrganizationEntity, { id: organizationId }, { archivedAt: new Date() });
      await this.defaults.clearOrganization(organizationId);
      await this.outbox.record({ event: 'organization_archived', organizationId, triggeredBy: principal.userId, payload: { organizationId } });
      return null;
    });
  }

  /** Any member may leave, suspended ones too (spec 4.2 only holds back the owner). */
  async leave(principal: Principal, organizationId: string): Promise<null> {
    return this.tx.run(async () => {
      const caller = await this.access.find(principal.userId, organizationId, true);
      if (!caller) {
        throw AppException.notFound('organization');
      }
      if (caller.role === 'owner') {
        throw AppException.forbidden('the owner cannot leave; transfer ownership first');
      }
      await this.members.deleteMembership(organizationId, principal.userId, principal.userId, 'left');
      return null;
    });
  }

  /** The owner hands ownership to another active member and becomes admin. */
  async transferOwnership(principal: Principal, organizationId: string, dto: TransferOwnershipDto): Promise<OrganizationDetailDto> {
    return this.tx.run(async () => {
      const caller = await this.access.require(principal.userId, organizationId, 'owner', true);
      if (sameUuid(dto.userId, principal.userId)) {
        throw AppException.validation([{ field: 'userId', reason: 'you already own this organization' }]);
      }
      const target = await this.tx.manager.findOne(OrganizationMemberEntity, { where: { organizationId, userId: dto.userId } });
      if (!target || target.status !== 'active') {
        throw AppException.validation([{ field: 'userId', reason: 'the new owner must be an active member of the organization' }]);
      }
      await this.tx.manager.update(OrganizationMemberEntity, { id: target.id }, { role: 'owner' });
      await this.tx.manager.update(OrganizationMemberEntity, { id: caller.memberId }, { role: 'admin' });
      await this.tx.manager.update(OrganizationEntity, { id: organizationId }, { ownerId: dto.userId });
      await this.outbox.record(
        {
          event: 'member_updated',
          organizationId,
          triggeredBy: principal.userId,
          payload: { memberId: target.id, userId: dto.userId, before: { role: target.role }, changes: { role: 'owner' } },
        },
        {
          event: 'member_updated',
          organizationId,
          triggeredBy: principal.userId,
          payload: { memberId: caller.memberId, userId: principal.userId, before: { role: 'owner' }, changes: { role: 'admin' } },
        },
      );
      return this.detail(organizationId, 'admin');
    });
  }

  private async detail(organizationId: string, role: OrganizationRole): Promise<OrganizationDetailDto> {
    const org = await this.tx.manager.findOneOrFail(OrganizationEntity, { where: { id: organizationId } });
    const [workspace] = await this.tx.manager.query<Array<{ id: string }>>(
      `SELECT id FROM workspaces WHERE organization_id = $1 AND is_default AND deleted_at IS NULL ORDER BY created_at LIMIT 1`,
      [organizationId],
    );
    return {
      ...OrganizationResponseDto.from(org, role),
      defaultWorkspaceId: workspace?.id ?? null,
      statistics: await this.statistics.of(organizationId),
    };
  }
}

/**
 * A PATCH body that is the organization as read: `id`, `slug` and `type`, when sent, must be this organization's.
 * No route changes them, so a different value is refused rather than answered with a 200 that silently drops it.
 */
function requireOwnIdentity(org: OrganizationEntity, dto: UpdateOrganizationDto): void {
  const problems: Array<{ field: string; reason: string }> = [];
  // Ids compare case-insensitively (PostgreSQL answers them in lower case); slugs are unique case-insensitively.
  if (dto.id !== undefined && (typeof dto.id !== 'string' || dto.id.toLowerCase() !== org.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.slug !== undefined && (typeof dto.slug !== 'string' || dto.slug.toLowerCase() !== org.slug.toLowerCase())) {
    problems.push({ field: 'slug', reason: 'the slug of an organization cannot change' });
  }
  if (dto.type !== undefined && dto.type !== org.type) {
    problems.push({ field: 'type', reason: 'the type of an organization cannot change' });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}
