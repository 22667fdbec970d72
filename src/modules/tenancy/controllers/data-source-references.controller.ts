import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { CreateDataSourceReferenceDto, DataSourceReferenceResponseDto, UpdateDataSourceReferenceDto } from '../dtos/data-source-reference.dto.js';
import { RequireWorkspaceRole } from '../guards/tenancy-roles.decorators.js';
import { DataSourceReferencesService } from '../services/data-source-references.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('data-source references')
@Controller('organizations/:organizationId/workspaces/:workspaceId/data-source-references')
@Authenticated()
export class DataSourceReferencesController {
  constructor(private readonly references: DataSourceReferencesService) {}

  @Get()
  @RequireWorkspaceRole('viewer')
  @ApiOperation({ summary: "The workspace's data-source references" })
  @ApiEnvelope(DataSourceReferenceResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<DataSourceReferenceResponseDto>> {
    return this.references.list(principal, organizationId, workspaceId, query);
  }

  @Post()
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Add a reference (workspace owner with read permission on the source; organization owner/admin may force)' })
  @ApiEnvelope(DataSourceReferenceResponseDto, { status: 201 })
  @ApiConflictResponse({
    description:
      'ALREADY_EXISTS: the workspace already references that source for the type, or another active reference replaces the type ' +
      '(without force); payload referenceId names the existing reference',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: CreateDataSourceReferenceDto,
  ): Promise<DataSourceReferenceResponseDto> {
    return this.references.create(principal, organizationId, workspaceId, dto);
  }

  @Get(':refId')
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'A data-source reference (workspace owner or organization owner/admin)' })
  @ApiEnvelope(DataSourceReferenceResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('refId') refId: string,
  ): Promise<DataSourceReferenceResponseDto> {
    return this.references.get(principal, organizationId, workspaceId, refId);
  }

  @Patch(':refId')
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Pause (`inactive`) or enable (`active`) a reference' })
  @ApiEnvelope(DataSourceReferenceResponseDto)
  @ApiConflictResponse({
    description: 'ALREADY_EXISTS: enabling while another active reference replaces the type; payload referenceId names it',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('refId') refId: string,
    @Body() dto: UpdateDataSourceReferenceDto,
  ): Promise<DataSourceReferenceResponseDto> {
    return this.references.update(principal, organizationId, workspaceId, refId, dto);
  }

  @Delete(':refId')
  @FirstPartyOnly()
  @RequireWorkspaceRole('owner')
  @ApiOperation({ summary: 'Remove a reference: local documents of that type are shown and editable again' })
  @ApiEnvelope(null)
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Param('workspaceId') workspaceId: string,
    @Param('refId') refId: string,
    @NoBody() _body: undefined,
  ): Promise<null> {
    return this.references.remove(principal, organizationId, workspaceId, refId);
  }
}
