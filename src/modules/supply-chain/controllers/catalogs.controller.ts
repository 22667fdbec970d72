import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { RowDeleteResponseDto, RowWriteResponseDto } from '../../documents/dtos/row.dto.js';
import { RevisionResponseDto } from '../../documents/dtos/revision.dto.js';
import { RequireOrgRole } from '../../tenancy/guards/tenancy-roles.decorators.js';
import {
  BatchUpdateDto,
  BatchUpdateResultDto,
  CatalogResponseDto,
  CatalogRowUpdateDto,
  CreateCatalogDto,
  UpdateCatalogDto,
} from '../dtos/catalog.dto.js';
import { RequestIdQueryDto, ScFieldDto } from '../dtos/common.dto.js';
import {
  CatalogConnectionListQueryDto,
  ConnectionResponseDto,
  CreateConnectionDto,
} from '../dtos/connection.dto.js';
import { CatalogsService } from '../services/catalogs.service.js';
import { ConnectionsService } from '../services/connections.service.js';
import { OrganizationIdParam } from './organization-id.decorator.js';
import { ApiScConflict, ROW_WRITE_CONFLICTS } from './openapi-errors.js';

class RevisionsSinceQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'A revision id of this catalog: only revisions merged after it, oldest first',
  })
  @IsOptional()
  @IsUUID()
  since?: string;
}

const ROW_DESCRIPTION =
  'Writes go through the documents change engine: with requestId appended to that open request, else merged at once (a revision).';

/**
 * Catalogs (spec 2.14, 4.8): organization-level documents of type `catalog`, also reachable at
 * `/doc/catalog/{catalogId}?organizationId=…` (docs/supply-chain.md).
 */
@ApiTags('supply chain: catalogs')
@Controller('organizations/:organizationId/catalogs')
@RequireOrgRole('guest')
export class CatalogsController {
  constructor(
    private readonly catalogs: CatalogsService,
    private readonly connections: ConnectionsService,
  ) {}

  @Post()
  @RequireScopes('doc:write')
  @ApiOperation({
    summary: 'Create a catalog (owners, admins, members): an organization-level document of type catalog',
  })
  @ApiEnvelope(CatalogResponseDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Body() dto: CreateCatalogDto,
  ): Promise<CatalogResponseDto> {
    return this.catalogs.create(principal, organizationId, dto);
  }

  @Get()
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Catalogs of the organization (every active member)' })
  @ApiEnvelope(CatalogResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<CatalogResponseDto>> {
    return this.catalogs.list(principal, organizationId, query);
  }

  @Get(':catalogId')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'One catalog' })
  @ApiEnvelope(CatalogResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
  ): Promise<CatalogResponseDto> {
    return this.catalogs.get(principal, organizationId, catalogId);
  }

  @Patch(':catalogId')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Update name, description, catalogType, sharingEnabled (owners, admins)' })
  @ApiEnvelope(CatalogResponseDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Body() dto: UpdateCatalogDto,
  ): Promise<CatalogResponseDto> {
    return this.catalogs.update(principal, organizationId, catalogId, dto);
  }

  @Get(':catalogId/fields')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'The catalog fields, paged in field order' })
  @ApiEnvelope(ScFieldDto, { shape: 'page' })
  fields(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ScFieldDto>> {
    return this.catalogs.fields(principal, organizationId, catalogId, query);
  }

  @Patch(':catalogId/rows/:rowId')
  @RequireScopes('data:write')
  @ApiOperation({
    summary: 'Update a catalog row (values; version for optimistic locking)',
    description: ROW_DESCRIPTION,
  })
  @ApiEnvelope(RowWriteResponseDto)
  @ApiScConflict(ROW_WRITE_CONFLICTS)
  updateRow(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Param('rowId') rowId: string,
    @Query() query: RequestIdQueryDto,
    @Body() body: CatalogRowUpdateDto,
  ): Promise<RowWriteResponseDto> {
    return this.catalogs.updateRow(principal, organizationId, catalogId, rowId, body, query.requestId);
  }

  @Delete(':catalogId/rows/:rowId')
  @RequireScopes('data:write')
  @ApiOperation({ summary: 'Delete a catalog row', description: ROW_DESCRIPTION })
  @ApiEnvelope(RowDeleteResponseDto)
  @ApiScConflict(ROW_WRITE_CONFLICTS)
  deleteRow(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Param('rowId') rowId: string,
    @Query() query: RequestIdQueryDto,
  ): Promise<RowDeleteResponseDto> {
    return this.catalogs.deleteRow(principal, organizationId, catalogId, rowId, query.requestId);
  }

  @Post(':catalogId/rows/batch-update')
  @HttpCode(200)
  @RequireScopes('data:write')
  @ApiOperation({
    summary:
      'Batch: rows [{target{row}, values[]}] update, rows without target are created; at most 1000, all or nothing',
    description: `${ROW_DESCRIPTION} Without requestId: one request, one revision.`,
  })
  @ApiEnvelope(BatchUpdateResultDto)
  @ApiScConflict(ROW_WRITE_CONFLICTS)
  batchUpdate(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Query() query: RequestIdQueryDto,
    @Body() body: BatchUpdateDto,
  ): Promise<BatchUpdateResultDto> {
    return this.catalogs.batchUpdate(principal, organizationId, catalogId, body, query.requestId);
  }

  @Get(':catalogId/revisions')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary: 'Revisions of the catalog; with since (a revision id) only the later ones, oldest first',
  })
  @ApiEnvelope(RevisionResponseDto, { shape: 'page' })
  revisions(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Query() query: RevisionsSinceQueryDto,
  ): Promise<Page<RevisionResponseDto>> {
    return this.catalogs.revisionsSince(principal, organizationId, catalogId, query.since, query);
  }

  @Post(':catalogId/connections')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Create a connection of the catalog (owners, admins)' })
  @ApiEnvelope(ConnectionResponseDto, { status: 201 })
  @ApiScConflict('INVALID_STATE: the catalog has sharingEnabled false')
  createConnection(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Body() dto: CreateConnectionDto,
  ): Promise<ConnectionResponseDto> {
    return this.connections.create(principal, organizationId, dto, catalogId);
  }

  @Get(':catalogId/connections')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Connections of the catalog' })
  @ApiEnvelope(ConnectionResponseDto, { shape: 'page' })
  listConnections(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('catalogId') catalogId: string,
    @Query() query: CatalogConnectionListQueryDto,
  ): Promise<Page<ConnectionResponseDto>> {
    return this.connections.listForCatalog(principal, organizationId, catalogId, query);
  }
}
