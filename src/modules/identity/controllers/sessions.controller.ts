import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { EndedSessionsDto, SessionResponseDto } from '../dtos/auth.dto.js';
import { FirstPartySessionGuard } from '../../../common/auth/first-party-session.guard.js';
import { AccountSessionsService } from '../services/account-sessions.service.js';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

@ApiTags('auth')
@Controller('auth/sessions')
@Authenticated()
@UseGuards(FirstPartySessionGuard)
export class SessionsController {
  constructor(private readonly sessions: AccountSessionsService) {}

  @Get()
  @ApiOperation({ summary: 'Active sessions of the current user (sign-ins and OAuth authorizations)' })
  @ApiEnvelope(SessionResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<Page<SessionResponseDto>> {
    return this.sessions.list(principal, query);
  }

  @Post('logout-all')
  @HttpCode(200)
  @ApiOperation({ summary: 'End every session of the current user, this one included' })
  @ApiEnvelope(EndedSessionsDto)
  logoutAll(@CurrentPrincipal() principal: Principal): Promise<EndedSessionsDto> {
    return this.sessions.endAll(principal);
  }

  @Delete(':sessionId')
  @ApiOperation({ summary: 'End a session: its refresh token and access tokens stop working' })
  @ApiEnvelope(null)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown or already ended session, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  end(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId', new UuidParamPipe('session')) sessionId: string,
  ): Promise<void> {
    return this.sessions.end(principal, sessionId);
  }
}
