import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { RequireOrgRole } from '../../tenancy/guards/tenancy-roles.decorators.js';
import { ConnectorResponseDto, CreateConnectorDto } from '../dtos/connector.dto.js';
import { ConnectorsService } from '../services/connectors.service.js';
import { OrganizationIdParam } from './organization-id.decorator.js';
import { ApiScConflict } from './openapi-errors.js';

/** Connectors inside one organization (spec 2.14, 4.8): orderbook_to_catalog and catalog_clone. */
@ApiTags('supply chain: connectors')
@Controller('organizations/:organizationId/connectors')
@RequireOrgRole('guest')
export class ConnectorsController {
  constructor(private readonly connectors: ConnectorsService) {}

  @Post()
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Create a connector (owners, admins)' })
  @ApiEnvelope(ConnectorResponseDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Body() dto: CreateConnectorDto,
  ): Promise<ConnectorResponseDto> {
    return this.connectors.create(principal, organizationId, dto);
  }

  @Get()
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Connectors of the organization' })
  @ApiEnvelope(ConnectorResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ConnectorResponseDto>> {
    return this.connectors.list(principal, organizationId, query);
  }

  @Get(':connectorId')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'One connector' })
  @ApiEnvelope(ConnectorResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<ConnectorResponseDto> {
    return this.connectors.get(principal, organizationId, connectorId);
  }

  @Post(':connectorId/pause')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Pause a connector (owners, admins)' })
  @ApiEnvelope(ConnectorResponseDto)
  @ApiScConflict('INVALID_STATE: the connector is not active (payload connectorId, status)')
  pause(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<ConnectorResponseDto> {
    return this.connectors.setStatus(principal, organizationId, connectorId, 'paused');
  }

  @Post(':connectorId/resume')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Resume a connector (owners, admins)' })
  @ApiEnvelope(ConnectorResponseDto)
  @ApiScConflict('INVALID_STATE: the connector is not paused (payload connectorId, status)')
  resume(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<ConnectorResponseDto> {
    return this.connectors.setStatus(principal, organizationId, connectorId, 'active');
  }

  @Delete(':connectorId')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Delete a connector (owners, admins)' })
  @ApiEnvelope(null)
  remove(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<null> {
    return this.connectors.remove(principal, organizationId, connectorId);
  }
}
