import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OutboxService } from '../../events/outbox.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import { type CreatedInvitationDto, type CreateInvitationDto, DEFAULT_INVITATION_DAYS, type InvitationQueryDto, type InvitationResponseDto } from '../dtos/invitation.dto.js';
import { iso, isoRequired } from '../dtos/tenancy-common.dto.js';
import { OrganizationInvitationEntity } from '../entities/organization-invitation.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { organizationLabel } from '../policies/organization-name.js';
import { isOrgAdmin, isUuid } from '../policies/organization-roles.js';
import { OrganizationAccessService } from './organization-access.service.js';

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Organization-side invitations (spec 4.2): create (and e-mail the token), list, get, revoke. */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: OrganizationAccessService,
    private readonly users: UsersService,
    private readonly notifier: NotifierService,
    private readonly outbox: OutboxService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, organizationId: string, dto: CreateInvitationDto): Promise<CreatedInvitationDto> {
    return this.tx.run(async () => {
      // Locked like the paths that make a member (the organization row first): an add, approval or acceptance in
      // progress is waited for and its member seen below (ALREADY_MEMBER), or it waits for this invitation and
      // revokes it. Checked without the lock, an invitation could commit after the add's revocation: left pending
      // for a member, it would let them back in with its role after a later removal.
      await this.access.require(principal.userId, organizationId, 'admin', true);
      const email = dto.email.trim();
      const [member] = await this.tx.manager.query<unknown[]>(
        `SELECT 1 FROM organization_members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND lower(u.email) = lower($2)`,
        [organizationId, email],
      );
      if (member) {
        throw new AppException(ErrorCode.ALREADY_MEMBER, { details: [{ field: 'email', reason: 'this person is already a member' }] });
      }
      await this.expireDue({ organizationId, email });
      const pending = await this.tx.manager
        .createQueryBuilder(OrganizationInvitationEntity, 'i')
        .where('i.organization_id = :organizationId AND lower(i.email) = lower(:email) AND i.status = :status', { organizationId, email, status: 'pending' })
        .getOne();
      if (pending) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [{ field: 'email', reason: 'a pending invitation for this e-mail exists; revoke it first' }],
          payload: { invitationId: pending.id },
        });
      }
      const token = randomBytes(32).toString('base64url');
      const days = dto.expiresInDays ?? DEFAULT_INVITATION_DAYS;
      const invitation = this.tx.manager.create(OrganizationInvitationEntity, {
        organizationId,
        email,
        role: dto.role ?? 'member',
        message: dto.message ?? null,
        status: 'pending',
        tokenHash: hashInvitationToken(token),
        invitedBy: principal.userId,
        expiresAt: new Date(Date.now() + days * 86_400_000),
      });
      await this.tx.manager.save(invitation);
      await this.sendInvitation(invitation, token, principal.userId);
      await this.outbox.record({
        event: 'invitation_created',
        organizationId,
        triggeredBy: principal.userId,
        payload: { invitationId: invitation.id, email, role: invitation.role, expiresAt: invitation.expiresAt.toISOString() },
      });
      return { ...(await this.toDto(invitation)), token, url: this.invitationUrl(token) };
    });
  }

  async list(principal: Principal, organizationId: string, query: InvitationQueryDto): Promise<Page<InvitationResponseDto>> {
    await this.access.require(principal.userId, organizationId, 'admin');
    await this.tx.run(() => this.expireDue({ organizationId }));
    const qb = this.tx.manager
      .createQueryBuilder(OrganizationInvitationEntity, 'i')
      .where('i.organization_id = :organizationId', { organizationId })
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .take(query.pageSize)
      .skip(offsetOf(query));
    if (query.status) {
      qb.andWhere('i.status = :status', { status: query.status });
    }
    const [rows, total] = await qb.getManyAndCount();
    return pageOf(await this.toDtos(rows), total, query);
  }

  /** Owner, admin or the inviter. */
  async get(principal: Principal, organizationId: string, invitationId: string): Promise<InvitationResponseDto> {
    const caller = await this.access.require(principal.userId, organizationId, 'guest');
    await this.tx.run(() => this.expireDue({ organizationId, invitationId: isUuid(invitationId) ? invitationId : undefined }));
    const invitation = await this.find(organizationId, invitationId);
    if (!isOrgAdmin(caller.role) && invitation.invitedBy !== principal.userId) {
      throw AppException.forbidden('only owners, admins and the inviter see an invitation');
    }
    return this.toDto(invitation);
  }

  /** DELETE: revokes an invitation that was not accepted (owner, admin or the inviter). Revoking twice is a no-op. */
  async revoke(principal: Principal, organizationId: string, invitationId: string): Promise<InvitationResponseDto> {
    return this.tx.run(async () => {
      const caller = await this.access.require(principal.userId, organizationId, 'guest');
      const invitation = await this.find(organizationId, invitationId, true);
      if (!isOrgAdmin(caller.role) && invitation.invitedBy !== principal.userId) {
        throw AppException.forbidden('only owners, admins and the inviter may revoke an invitation');
      }
      if (invitation.status === 'accepted') {
        throw new AppException(ErrorCode.INVITATION_ALREADY_ACCEPTED, { payload: { status: invitation.status } });
      }
      if (invitation.status !== 'revoked') {
        await this.tx.manager.update(
          OrganizationInvitationEntity,
          { id: invitation.id },
          { status: 'revoked', revokedAt: new Date(), revokedBy: principal.userId },
        );
      }
      return this.toDto(await this.find(organizationId, invitationId));
    });
  }

  /**
   * Moves pending invitations past their expiry to `expired` (all of them, or those matching the filter).
   * Run by the scheduled job and before every read or use of an invitation. Returns how many expired.
   */
  async expireDue(filter: { organizationId?: string; email?: string; invitationId?: string; tokenHash?: string } = {}): Promise<number> {
    const qb = this.tx.manager
      .createQueryBuilder()
      .update(OrganizationInvitationEntity)
      .set({ status: 'expired', expiredAt: () => 'now()' })
      .where(`status = 'pending' AND expires_at <= now()`);
    if (filter.organizationId) {
      qb.andWhere('organization_id = :organizationId', { organizationId: filter.organizationId });
    }
    if (filter.email) {
      qb.andWhere('lower(email) = lower(:email)', { email: filter.email });
    }
    if (filter.invitationId) {
      qb.andWhere('id = :invitationId', { invitationId: filter.invitationId });
    }
    if (filter.tokenHash) {
      qb.andWhere('token_hash = :tokenHash', { tokenHash: filter.tokenHash });
    }
    const result = await qb.execute();
    return result.affected ?? 0;
  }

  async toDto(invitation: OrganizationInvitationEntity): Promise<InvitationResponseDto> {
    return (await this.toDtos([invitation]))[0];
  }

  private async toDtos(invitations: OrganizationInvitationEntity[]): Promise<InvitationResponseDto[]> {
    const inviters = await this.users.summaries(invitations.map((i) => i.invitedBy));
    return invitations.map((i) => ({
      id: i.id,
      organizationId: i.organizationId,
      email: i.email,
      role: i.role,
      message: i.message,
      status: i.status,
      invitedBy: i.invitedBy,
      inviter: inviters.get(i.invitedBy) ?? null,
      expiresAt: isoRequired(i.expiresAt),
      acceptedAt: iso(i.acceptedAt),
      acceptedBy: i.acceptedBy,
      declinedAt: iso(i.declinedAt),
      revokedAt: iso(i.revokedAt),
      revokedBy: i.revokedBy,
      expiredAt: iso(i.expiredAt),
      createdAt: isoRequired(i.createdAt),
      updatedAt: isoRequired(i.updatedAt),
    }));
  }

  private async find(organizationId: string, invitationId: string, lock = false): Promise<OrganizationInvitationEntity> {
    const invitation = isUuid(invitationId)
      ? await this.tx.manager.findOne(OrganizationInvitationEntity, {
          where: { id: invitationId, organizationId },
          ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
        })
      : null;
    if (!invitation) {
      throw AppException.notFound('invitation');
    }
    return invitation;
  }

  private invitationUrl(token: string): string {
    return `${this.config.publicBaseUrl.replace(/\/+$/, '')}/api/v1/invitations/${token}`;
  }

  private async sendInvitation(invitation: OrganizationInvitationEntity, token: string, inviterId: string): Promise<void> {
    const org = await this.tx.manager.findOneOrFail(OrganizationEntity, { where: { id: invitation.organizationId } });
    const inviter = await this.users.getById(inviterId);
    const orgName = organizationLabel(org);
    const url = this.invitationUrl(token);
    await this.notifier.send({
      channel: 'email',
      to: invitation.email,
      kind: 'invitation',
      subject: `${inviter.displayName} invited you to ${orgName} on Quire`,
      body:
        `${inviter.displayName} invited you to join ${orgName} as ${invitation.role}.\n` +
        (invitation.message ? `\n"${invitation.message}"\n` : '') +
        `\nInvitation token: ${token}\nSign in with this e-mail address, then accept: POST ${url}/accept` +
        `\nor decline: POST ${url}/decline\nThe invitation expires at ${invitation.expiresAt.toISOString()}.`,
      userId: (await this.users.findByEmail(invitation.email))?.id ?? null,
      data: {
        token,
        url,
        invitationId: invitation.id,
        organizationId: org.id,
        organizationName: orgName,
        role: invitation.role,
        expiresAt: invitation.expiresAt.toISOString(),
      },
    });
  }
}
