import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { RequireOrgRole } from '../../tenancy/guards/tenancy-roles.decorators.js';
import { ReviewNoteDto, reviewNoteOf } from '../dtos/common.dto.js';
import {
  BindingListQueryDto,
  ConnectionListQueryDto,
  ConnectionResponseDto,
  CreateConnectionDto,
  CreateShareLinkDto,
  SharedConnectionDto,
  ShareLinkInfoDto,
  ShareLinkResponseDto,
  SupplierBindingDto,
  UpdateConnectionDto,
} from '../dtos/connection.dto.js';
import { BindingsService } from '../services/bindings.service.js';
import { ConnectionsService } from '../services/connections.service.js';
import { ShareLinksService } from '../services/share-links.service.js';
import { OrganizationIdParam } from './organization-id.decorator.js';
import { ApiScConflict, ApiScNotFound, ApiShareCodeGone } from './openapi-errors.js';

/** Connections of catalogs (spec 2.14, 3, 4.8), their states, share links and the supplier's binding decisions. */
@ApiTags('supply chain: connections')
@Controller('organizations/:organizationId/connections')
@RequireOrgRole('guest')
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly links: ShareLinksService,
    private readonly bindings: BindingsService,
  ) {}

  @Post()
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Create a connection (body sourceCatalogId; owners, admins)' })
  @ApiEnvelope(ConnectionResponseDto, { status: 201 })
  @ApiScConflict('INVALID_STATE: the catalog has sharingEnabled false')
  create(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Body() dto: CreateConnectionDto,
  ): Promise<ConnectionResponseDto> {
    return this.connections.create(principal, organizationId, dto);
  }

  @Get()
  @RequireScopes('doc:read')
  @ApiOperation({ summary: "The organization's own connections (filters catalogId, status)" })
  @ApiEnvelope(ConnectionResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Query() query: ConnectionListQueryDto,
  ): Promise<Page<ConnectionResponseDto>> {
    return this.connections.list(principal, organizationId, query);
  }

  @Get(':connectionId')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      'One connection: the full record for the supplier; the shared view for a buyer organization that may see it (public, whitelisted, bound)',
  })
  @ApiEnvelope(ConnectionResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
  ): Promise<ConnectionResponseDto> {
    return this.connections.get(principal, organizationId, connectionId);
  }

  @Patch(':connectionId')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Update a connection (owners, admins; not when disabled)' })
  @ApiEnvelope(ConnectionResponseDto)
  @ApiScConflict('INVALID_STATE: the connection is disabled (payload connectionId, status)')
  update(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Body() dto: UpdateConnectionDto,
  ): Promise<ConnectionResponseDto> {
    return this.connections.update(principal, organizationId, connectionId, dto);
  }

  @Post(':connectionId/pause')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'active → paused: nothing propagates until resumed' })
  @ApiEnvelope(ConnectionResponseDto)
  @ApiScConflict('INVALID_STATE: the connection is not active (payload connectionId, status)')
  pause(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
  ): Promise<ConnectionResponseDto> {
    return this.connections.transition(principal, organizationId, connectionId, 'pause');
  }

  @Post(':connectionId/resume')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'paused → active' })
  @ApiEnvelope(ConnectionResponseDto)
  @ApiScConflict('INVALID_STATE: the connection is not paused (payload connectionId, status)')
  resume(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
  ): Promise<ConnectionResponseDto> {
    return this.connections.transition(principal, organizationId, connectionId, 'resume');
  }

  @Post(':connectionId/disable')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({
    summary: 'active | paused → disabled (final): no propagation, no new bindings, share links refused',
  })
  @ApiEnvelope(ConnectionResponseDto)
  @ApiScConflict('INVALID_STATE: the connection is disabled already (payload connectionId, status)')
  disable(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
  ): Promise<ConnectionResponseDto> {
    return this.connections.transition(principal, organizationId, connectionId, 'disable');
  }

  @Post(':connectionId/share-link')
  @RequireScopes('doc:write')
  @ApiOperation({
    summary:
      'Create a share link (expiresAt, maxUses): shareUrl, qrCode (PNG data URL), expiresAt — the code is shown only here',
  })
  @ApiEnvelope(ShareLinkResponseDto, { status: 201 })
  @ApiScConflict('INVALID_STATE: the connection is disabled (payload connectionId, status)')
  shareLink(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Body() dto: CreateShareLinkDto,
  ): Promise<ShareLinkResponseDto> {
    return this.links.createShareLink(principal, organizationId, connectionId, dto);
  }

  @Get(':connectionId/share-links')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Share links of the connection (owners, admins; without codes)' })
  @ApiEnvelope(ShareLinkInfoDto, { shape: 'page' })
  shareLinks(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ShareLinkInfoDto>> {
    return this.links.listShareLinks(principal, organizationId, connectionId, query);
  }

  @Delete(':connectionId/share-links/:linkId')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Revoke a share link (410 SHARE_LINK_EXPIRED afterwards)' })
  @ApiEnvelope(ShareLinkInfoDto)
  revokeShareLink(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Param('linkId') linkId: string,
  ): Promise<ShareLinkInfoDto> {
    return this.links.revokeShareLink(principal, organizationId, connectionId, linkId);
  }

  @Get(':connectionId/bindings')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary: 'Bindings of the connection, as the supplier sees them (buyer organization and state only)',
  })
  @ApiEnvelope(SupplierBindingDto, { shape: 'page' })
  bindingsOf(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Query() query: BindingListQueryDto,
  ): Promise<Page<SupplierBindingDto>> {
    return this.bindings.listForSupplier(principal, organizationId, connectionId, query);
  }

  @Post(':connectionId/bindings/:bindingId/approve')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'pending → active (owners, admins of the supplier)' })
  @ApiEnvelope(SupplierBindingDto)
  @ApiScConflict('INVALID_STATE: the binding is not pending, or the connection is disabled (payload bindingId or connectionId, status)')
  approve(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Param('bindingId') bindingId: string,
    @Body() dto: ReviewNoteDto,
  ): Promise<SupplierBindingDto> {
    return this.bindings.decide(principal, organizationId, connectionId, bindingId, 'approve', reviewNoteOf(dto));
  }

  @Post(':connectionId/bindings/:bindingId/reject')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'pending → rejected (owners, admins of the supplier)' })
  @ApiEnvelope(SupplierBindingDto)
  @ApiScConflict('INVALID_STATE: the binding is neither pending nor active (payload bindingId, status)')
  reject(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('connectionId') connectionId: string,
    @Param('bindingId') bindingId: string,
    @Body() dto: ReviewNoteDto,
  ): Promise<SupplierBindingDto> {
    return this.bindings.decide(principal, organizationId, connectionId, bindingId, 'reject', reviewNoteOf(dto));
  }
}

/** `GET /connect/share/{code}` at the host root (spec 4.8): any signed-in user holding the code. */
@ApiTags('supply chain: connections')
@Controller('connect/share')
export class ShareLinksController {
  constructor(private readonly links: ShareLinksService) {}

  @Get(':code')
  @Authenticated()
  @ApiOperation({
    summary:
      "Resolve a share code: connection id, name, source organization, catalog summary, share mode. A read: spends no use; expired/revoked → 410 SHARE_LINK_EXPIRED, maxUses organizations admitted (none of them the caller's) → 410 SHARE_LINK_EXHAUSTED",
  })
  @ApiEnvelope(SharedConnectionDto)
  @ApiScNotFound('NOT_FOUND: no such share code')
  @ApiShareCodeGone()
  resolve(
    @CurrentPrincipal() principal: Principal,
    @Param('code') code: string,
  ): Promise<SharedConnectionDto> {
    return this.links.resolveShareCode(principal, code);
  }
}
