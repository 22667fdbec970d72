import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiGoneResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { InvitationAcceptedDto, InvitationDetailsDto } from '../dtos/invitation.dto.js';
import { InvitationTokensService } from '../services/invitation-tokens.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('invitations')
@ApiNotFoundResponse({ description: 'NOT_FOUND: unknown token, or the organization is archived', schema: ERROR_ENVELOPE_SCHEMA })
@Controller('invitations/:token')
@Authenticated()
export class InvitationTokensController {
  constructor(private readonly tokens: InvitationTokensService) {}

  @Get()
  @ApiOperation({ summary: 'The invitation a token stands for' })
  @ApiEnvelope(InvitationDetailsDto)
  get(@CurrentPrincipal() principal: Principal, @Param('token') token: string): Promise<InvitationDetailsDto> {
    return this.tokens.details(principal, token);
  }

  @Post('accept')
  @FirstPartyOnly()
  @ApiConflictResponse({ description: 'INVITATION_ALREADY_ACCEPTED, INVITATION_DECLINED, ALREADY_MEMBER', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiGoneResponse({ description: 'INVITATION_EXPIRED, INVITATION_REVOKED', schema: ERROR_ENVELOPE_SCHEMA })
  @HttpCode(200)
  @ApiOperation({ summary: "Accept: the signed-in user's e-mail must match; creates the member record" })
  @ApiEnvelope(InvitationAcceptedDto)
  accept(@CurrentPrincipal() principal: Principal, @Param('token') token: string, @NoBody() _body: undefined): Promise<InvitationAcceptedDto> {
    return this.tokens.accept(principal, token);
  }

  @Post('decline')
  @FirstPartyOnly()
  @ApiConflictResponse({ description: 'INVITATION_ALREADY_ACCEPTED, INVITATION_DECLINED', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiGoneResponse({ description: 'INVITATION_EXPIRED, INVITATION_REVOKED', schema: ERROR_ENVELOPE_SCHEMA })
  @HttpCode(200)
  @ApiOperation({ summary: 'Decline (status becomes `revoked`, with `declinedAt`); the e-mail must match' })
  @ApiEnvelope(InvitationDetailsDto)
  decline(@CurrentPrincipal() principal: Principal, @Param('token') token: string, @NoBody() _body: undefined): Promise<InvitationDetailsDto> {
    return this.tokens.decline(principal, token);
  }
}
