import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UsersService } from '../../identity/services/users.service.js';
import type { InvitationAcceptedDto, InvitationDetailsDto } from '../dtos/invitation.dto.js';
import { isoRequired } from '../dtos/tenancy-common.dto.js';
import { OrganizationInvitationEntity } from '../entities/organization-invitation.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { hashInvitationToken, InvitationsService } from './invitations.service.js';
import { OrganizationAccessService } from './organization-access.service.js';
import { OrganizationMembersService } from './organization-members.service.js';

/**
 * The invitee's side (spec 4.2 `/invitations/{token}`): see, accept, decline. Every step first moves an
 * overdue pending invitation to `expired` (committed on its own, so the refusal that follows sticks).
 */
@Injectable()
export class InvitationTokensService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly invitations: InvitationsService,
    private readonly members: OrganizationMembersService,
    private readonly access: OrganizationAccessService,
    private readonly users: UsersService,
  ) {}

  async details(_principal: Principal, token: string): Promise<InvitationDetailsDto> {
    await this.expireIfDue(token);
    const { invitation, organization } = await this.load(token, false);
    return this.detailsOf(invitation, organization);
  }

  async accept(principal: Principal, token: string): Promise<InvitationAcceptedDto> {
    await this.expireIfDue(token);
    return this.tx.run(async () => {
      // The organization row is locked before the invitation, in the order every membership path takes its locks
      // (a racing direct add or join-request approval then runs wholly before or after this acceptance).
      const { invitation: unlocked } = await this.load(token, false);
      if (!(await this.access.lockOrganization(unlocked.organizationId))) {
        throw AppException.notFound('invitation');
      }
      const { invitation, organization } = await this.load(token, true);
      await this.requireInvitee(principal, invitation);
      requirePending(invitation);
      const member = await this.members.createMember(invitation.organizationId, principal.userId, invitation.role, invitation.invitedBy, 'invitation');
      await this.tx.manager.update(
        OrganizationInvitationEntity,
        { id: invitation.id },
        { status: 'accepted', acceptedAt: new Date(), acceptedBy: principal.userId },
      );
      const updated = await this.tx.manager.findOneByOrFail(OrganizationInvitationEntity, { id: invitation.id });
      return { invitation: await this.detailsOf(updated, organization), member };
    });
  }

  async decline(principal: Principal, token: string): Promise<InvitationDetailsDto> {
    await this.expireIfDue(token);
    return this.tx.run(async () => {
      const { invitation, organization } = await this.load(token, true);
      await this.requireInvitee(principal, invitation);
      requirePending(invitation);
      await this.tx.manager.update(OrganizationInvitationEntity, { id: invitation.id }, { status: 'revoked', declinedAt: new Date() });
      const updated = await this.tx.manager.findOneByOrFail(OrganizationInvitationEntity, { id: invitation.id });
      return this.detailsOf(updated, organization);
    });
  }

  /** Runs before (outside) the unit of work, so the move to `expired` is kept although the use is refused. */
  private async expireIfDue(token: string): Promise<void> {
    await this.invitations.expireDue({ tokenHash: hashInvitationToken(token) });
  }

  /** The invitation of a token (NOT_FOUND for an unknown token or an archived organization). */
  private async load(token: string, lock: boolean): Promise<{ invitation: OrganizationInvitationEntity; organization: OrganizationEntity }> {
    if (!/^[A-Za-z0-9_-]{16,128}$/.test(token)) {
      throw AppException.notFound('invitation');
    }
    const tokenHash = hashInvitationToken(token);
    const invitation = await this.tx.manager.findOne(OrganizationInvitationEntity, {
      where: { tokenHash },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    const organization = invitation
      ? await this.tx.manager.findOne(OrganizationEntity, { where: { id: invitation.organizationId } })
      : null;
    if (!invitation || !organization || organization.archivedAt !== null) {
      throw AppException.notFound('invitation');
    }
    return { invitation, organization };
  }

  private async requireInvitee(principal: Principal, invitation: OrganizationInvitationEntity): Promise<void> {
    const user = await this.users.getById(principal.userId);
    if (user.email.trim().toLowerCase() !== invitation.email.trim().toLowerCase()) {
      throw AppException.forbidden('the invitation was sent to another e-mail address; sign in with that address');
    }
  }

  private async detailsOf(invitation: OrganizationInvitationEntity, organization: OrganizationEntity): Promise<InvitationDetailsDto> {
    const inviter = await this.users.findById(invitation.invitedBy);
    return {
      id: invitation.id,
      organization: {
        id: organization.id,
        name: organization.name,
        slug: organization.slug,
        displayName: organization.displayName,
        logoUrl: organization.logoUrl,
        type: organization.type,
      },
      email: invitation.email,
      role: invitation.role,
      message: invitation.message,
      status: invitation.status,
      invitedByName: inviter?.displayName ?? null,
      expiresAt: isoRequired(invitation.expiresAt),
      createdAt: isoRequired(invitation.createdAt),
    };
  }
}

/** Accept and decline need a pending invitation; every other status has its own clear code. */
function requirePending(invitation: OrganizationInvitationEntity): void {
  const payload = { status: invitation.status, invitationId: invitation.id };
  switch (invitation.status) {
    case 'pending':
      return;
    case 'accepted':
      throw new AppException(ErrorCode.INVITATION_ALREADY_ACCEPTED, { payload });
    case 'revoked':
      // A decline is stored as `revoked` too; declinedAt tells it apart from a revoke by the organization.
      throw new AppException(invitation.declinedAt !== null ? ErrorCode.INVITATION_DECLINED : ErrorCode.INVITATION_REVOKED, { payload });
    case 'expired':
      throw new AppException(ErrorCode.INVITATION_EXPIRED, { payload: { ...payload, expiresAt: isoRequired(invitation.expiresAt) } });
  }
}
