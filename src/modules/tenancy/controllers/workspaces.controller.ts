import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { CreateWorkspaceDto, UpdateWorkspaceDto, WorkspaceQueryDto, WorkspaceResponseDto } from '../dtos/workspace.dto.js';
import { RequireOrgRole, RequireWorkspacePermission, RequireWorkspaceRole } from '../guards/tenancy-roles.decorators.js';
import { WorkspacesService } from '../services/workspaces.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('workspaces')
@Controller('organizations/:organizationId/workspaces')
@Authenticated()
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Create a workspace (organization owner or admin); the creator becomes its owner' })
  @ApiEnvelope(WorkspaceResponseDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: the slug is used in the organization (details.field slug)', schema: ERROR_ENVELOPE_SCHEMA })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Body() dto: CreateWorkspaceDto,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.create(principal, organizationId, dto);
  }

  @Get()
  @RequireOrgRole('guest')
  @ApiOperation({ summary: 'The workspaces the caller may access' })
  @ApiEnvelope(WorkspaceResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Query() query: WorkspaceQueryDto,
  ): Promise<Page<WorkspaceResponseDto>> {
    return this.workspaces.list(principal, organizationId, query);
  }

  @Get(':workspaceId')
  @RequireWorkspaceRole('viewer')
  @ApiOperation({ summary: 'A workspace (its members; public workspaces: every organization member)' })
  @ApiEnvelope(WorkspaceResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.get(principal, organizationId, workspaceId);
  }

  @Patch(':workspaceId')
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Update a workspace (workspace owner, or organization owner/admin)' })
  @ApiEnvelope(WorkspaceResponseDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: UpdateWorkspaceDto,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.update(principal, organizationId, workspaceId, dto);
  }

  @Delete(':workspaceId')
  @FirstPartyOnly()
  @RequireWorkspacePermission('delete')
  @ApiOperation({ summary: 'Soft-delete a workspace (workspace owner or organization owner)' })
  @ApiEnvelope(null)
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @NoBody() _body: undefined,
  ): Promise<null> {
    return this.workspaces.remove(principal, organizationId, workspaceId);
  }

  @Post(':workspaceId/archive')
  @FirstPartyOnly()
  @HttpCode(200)
  @RequireWorkspacePermission('archive')
  @ApiOperation({ summary: 'Archive: the workspace becomes read-only (workspace owner, organization owner/admin)' })
  @ApiEnvelope(WorkspaceResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the workspace is already archived', schema: ERROR_ENVELOPE_SCHEMA })
  archive(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @NoBody() _body: undefined,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.archive(principal, organizationId, workspaceId);
  }

  @Post(':workspaceId/restore')
  @FirstPartyOnly()
  @HttpCode(200)
  @RequireWorkspacePermission('archive')
  @ApiOperation({ summary: 'Restore an archived workspace (workspace owner, organization owner/admin)' })
  @ApiEnvelope(WorkspaceResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the workspace is not archived', schema: ERROR_ENVELOPE_SCHEMA })
  restore(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @NoBody() _body: undefined,
  ): Promise<WorkspaceResponseDto> {
    return this.workspaces.restore(principal, organizationId, workspaceId);
  }
}
