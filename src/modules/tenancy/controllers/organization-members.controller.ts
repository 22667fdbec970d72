import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { AddMemberDto, MemberQueryDto, MemberResponseDto, UpdateMemberDto } from '../dtos/member.dto.js';
import { RequireOrgRole } from '../guards/tenancy-roles.decorators.js';
import { OrganizationMembersService } from '../services/organization-members.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('organization members')
@Controller('organizations/:organizationId/members')
@Authenticated()
export class OrganizationMembersController {
  constructor(private readonly members: OrganizationMembersService) {}

  @Get()
  @RequireOrgRole('member')
  @ApiOperation({ summary: 'List members (filters: role, status, search by name or e-mail)' })
  @ApiEnvelope(MemberResponseDto, { shape: 'page' })
  list(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string, @Query() query: MemberQueryDto): Promise<Page<MemberResponseDto>> {
    return this.members.list(principal, organizationId, query);
  }

  @Post()
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Add a user as member (owner or admin)' })
  @ApiEnvelope(MemberResponseDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_MEMBER: the user is already a member (of any status)', schema: ERROR_ENVELOPE_SCHEMA })
  add(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string, @Body() dto: AddMemberDto): Promise<MemberResponseDto> {
    return this.members.add(principal, organizationId, dto);
  }

  @Get(':memberId')
  @RequireOrgRole('member')
  @ApiOperation({ summary: 'A member' })
  @ApiEnvelope(MemberResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('memberId') memberId: string,
  ): Promise<MemberResponseDto> {
    return this.members.get(principal, organizationId, memberId);
  }

  @Patch(':memberId')
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: "Change a member's role or status (owner or admin; the owner only by transfer)" })
  @ApiEnvelope(MemberResponseDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('memberId') memberId: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberResponseDto> {
    return this.members.update(principal, organizationId, memberId, dto);
  }

  @Delete(':memberId')
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Remove a member (owner or admin; the owner cannot be removed)' })
  @ApiEnvelope(null)
  remove(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string, @Param('memberId') memberId: string, @NoBody() _body: undefined): Promise<null> {
    return this.members.remove(principal, organizationId, memberId);
  }
}
