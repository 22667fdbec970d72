import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { CreatedInvitationDto, CreateInvitationDto, InvitationQueryDto, InvitationResponseDto } from '../dtos/invitation.dto.js';
import { RequireOrgRole } from '../guards/tenancy-roles.decorators.js';
import { InvitationsService } from '../services/invitations.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('invitations')
@Controller('organizations/:organizationId/invitations')
@Authenticated()
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post()
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Invite someone by e-mail (owner or admin); the token is e-mailed to the invitee and shown once in this answer' })
  @ApiEnvelope(CreatedInvitationDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_MEMBER: the e-mail belongs to a member; ALREADY_EXISTS: a pending invitation for the e-mail exists (payload invitationId)', schema: ERROR_ENVELOPE_SCHEMA })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Body() dto: CreateInvitationDto,
  ): Promise<CreatedInvitationDto> {
    return this.invitations.create(principal, organizationId, dto);
  }

  @Get()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'List invitations (owner or admin)' })
  @ApiEnvelope(InvitationResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Query() query: InvitationQueryDto,
  ): Promise<Page<InvitationResponseDto>> {
    return this.invitations.list(principal, organizationId, query);
  }

  @Get(':invitationId')
  @RequireOrgRole('guest')
  @ApiOperation({ summary: 'An invitation (owner, admin or the inviter)' })
  @ApiEnvelope(InvitationResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('invitationId') invitationId: string,
  ): Promise<InvitationResponseDto> {
    return this.invitations.get(principal, organizationId, invitationId);
  }

  @Delete(':invitationId')
  @FirstPartyOnly()
  @RequireOrgRole('guest')
  @ApiOperation({ summary: 'Revoke an invitation that was not accepted (owner, admin or the inviter)' })
  @ApiEnvelope(InvitationResponseDto)
  @ApiConflictResponse({ description: 'INVITATION_ALREADY_ACCEPTED: the invitation was accepted (payload status)', schema: ERROR_ENVELOPE_SCHEMA })
  revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('invitationId') invitationId: string,
    @NoBody() _body: undefined,
  ): Promise<InvitationResponseDto> {
    return this.invitations.revoke(principal, organizationId, invitationId);
  }
}
