import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { AddWorkspaceMemberDto, UpdateWorkspaceMemberDto, WorkspaceMemberQueryDto, WorkspaceMemberResponseDto } from '../dtos/workspace-member.dto.js';
import { RequireWorkspaceRole } from '../guards/tenancy-roles.decorators.js';
import { WorkspaceMembersService } from '../services/workspace-members.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('workspace members')
@Controller('organizations/:organizationId/workspaces/:workspaceId/members')
@Authenticated()
export class WorkspaceMembersController {
  constructor(private readonly members: WorkspaceMembersService) {}

  @Get()
  @RequireWorkspaceRole('viewer')
  @ApiOperation({ summary: 'List workspace members (filter: role, status)' })
  @ApiEnvelope(WorkspaceMemberResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Query() query: WorkspaceMemberQueryDto,
  ): Promise<Page<WorkspaceMemberResponseDto>> {
    return this.members.list(principal, organizationId, workspaceId, query);
  }

  @Post()
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Add an organization member to the workspace (workspace owner, organization owner/admin)' })
  @ApiEnvelope(WorkspaceMemberResponseDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_MEMBER: the user is already a member of the workspace (payload memberId)', schema: ERROR_ENVELOPE_SCHEMA })
  add(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: AddWorkspaceMemberDto,
  ): Promise<WorkspaceMemberResponseDto> {
    return this.members.add(principal, organizationId, workspaceId, dto);
  }

  @Get(':memberId')
  @RequireWorkspaceRole('viewer')
  @ApiOperation({ summary: 'A workspace member' })
  @ApiEnvelope(WorkspaceMemberResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('memberId') memberId: string,
  ): Promise<WorkspaceMemberResponseDto> {
    return this.members.get(principal, organizationId, workspaceId, memberId);
  }

  @Patch(':memberId')
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: "Change a workspace member's role or status" })
  @ApiEnvelope(WorkspaceMemberResponseDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('memberId') memberId: string,
    @Body() dto: UpdateWorkspaceMemberDto,
  ): Promise<WorkspaceMemberResponseDto> {
    return this.members.update(principal, organizationId, workspaceId, memberId, dto);
  }

  @Delete(':memberId')
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Remove a workspace member' })
  @ApiEnvelope(null)
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('memberId') memberId: string,
    @NoBody() _body: undefined,
  ): Promise<null> {
    return this.members.remove(principal, organizationId, workspaceId, memberId);
  }
}
