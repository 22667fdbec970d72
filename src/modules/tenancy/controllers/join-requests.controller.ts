import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import {
  ApproveJoinRequestDto,
  CreateJoinRequestDto,
  JoinRequestQueryDto,
  JoinRequestResponseDto,
  RejectJoinRequestDto,
} from '../dtos/join-request.dto.js';
import { RequireOrgRole } from '../guards/tenancy-roles.decorators.js';
import { JoinRequestsService } from '../services/join-requests.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

const requestNotFound = 'NOT_FOUND: unknown join request or organization, or the caller is neither the applicant nor a member';

@ApiTags('join requests')
@Controller('organizations/:organizationId/join-requests')
@Authenticated()
export class JoinRequestsController {
  constructor(private readonly requests: JoinRequestsService) {}

  @Post()
  @FirstPartyOnly()
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown or archived organization, or one that does not accept join requests', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiConflictResponse({ description: 'ALREADY_MEMBER, ALREADY_EXISTS (a pending request of the caller)', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiOperation({ summary: 'Ask to join (non-members, unless the organization set settings.allowJoinRequests to false)' })
  @ApiEnvelope(JoinRequestResponseDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Body() dto: CreateJoinRequestDto,
  ): Promise<JoinRequestResponseDto> {
    return this.requests.create(principal, organizationId, dto);
  }

  @Get()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'List join requests (owner or admin)' })
  @ApiEnvelope(JoinRequestResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Query() query: JoinRequestQueryDto,
  ): Promise<Page<JoinRequestResponseDto>> {
    return this.requests.list(principal, organizationId, query);
  }

  @Get(':requestId')
  @ApiNotFoundResponse({ description: requestNotFound, schema: ERROR_ENVELOPE_SCHEMA })
  @ApiOperation({ summary: 'A join request (owner, admin or the applicant)' })
  @ApiEnvelope(JoinRequestResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('requestId') requestId: string,
  ): Promise<JoinRequestResponseDto> {
    return this.requests.get(principal, organizationId, requestId);
  }

  @Delete(':requestId')
  @FirstPartyOnly()
  @ApiNotFoundResponse({ description: requestNotFound, schema: ERROR_ENVELOPE_SCHEMA })
  @ApiConflictResponse({ description: 'INVALID_STATE: the join request is not pending', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiOperation({ summary: 'Cancel a pending join request (the applicant only)' })
  @ApiEnvelope(JoinRequestResponseDto)
  cancel(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('requestId') requestId: string,
    @NoBody() _body: undefined,
  ): Promise<JoinRequestResponseDto> {
    return this.requests.cancel(principal, organizationId, requestId);
  }

  @Post(':requestId/approve')
  @FirstPartyOnly()
  @HttpCode(200)
  @RequireOrgRole('admin')
  @ApiOperation({
    summary: 'Approve: creates the member and notifies the applicant (owner or admin)',
    description: 'An applicant who meanwhile became a member another way keeps that membership; the request is still marked approved.',
  })
  @ApiEnvelope(JoinRequestResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the join request is not pending (payload status)', schema: ERROR_ENVELOPE_SCHEMA })
  approve(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('requestId') requestId: string,
    @Body() dto: ApproveJoinRequestDto,
  ): Promise<JoinRequestResponseDto> {
    return this.requests.approve(principal, organizationId, requestId, dto);
  }

  @Post(':requestId/reject')
  @FirstPartyOnly()
  @HttpCode(200)
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Reject with a review note; the applicant is notified (owner or admin)' })
  @ApiEnvelope(JoinRequestResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the join request is not pending (payload status)', schema: ERROR_ENVELOPE_SCHEMA })
  reject(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('requestId') requestId: string,
    @Body() dto: RejectJoinRequestDto,
  ): Promise<JoinRequestResponseDto> {
    return this.requests.reject(principal, organizationId, requestId, dto);
  }
}
