import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { RequireOrgRole } from '../../tenancy/guards/tenancy-roles.decorators.js';
import type { SyncRequestStatus } from '../domain/supply-chain.types.js';
import { BatchUpdateDto, BatchUpdateResultDto } from '../dtos/catalog.dto.js';
import { RequestIdQueryDto, ReviewNoteDto, reviewNoteOf } from '../dtos/common.dto.js';
import {
  BindingResponseDto,
  CreateBindingDto,
  CreateOrderBookDto,
  CreateSyncRequestDto,
  FieldMappingPreviewDto,
  FieldMappingPreviewResultDto,
  OrderBookBindingQueryDto,
  OrderBookFieldDto,
  OrderBookResponseDto,
  SyncLogQueryDto,
  SyncLogResponseDto,
  SyncRequestListQueryDto,
  SyncRequestResponseDto,
} from '../dtos/orderbook.dto.js';
import { BindingsService } from '../services/bindings.service.js';
import { OrderBooksService } from '../services/orderbooks.service.js';
import { SyncLogService } from '../services/sync-log.service.js';
import { SyncRequestService } from '../services/sync-requests.service.js';
import { OrganizationIdParam } from './organization-id.decorator.js';
import { ApiScConflict, ApiShareCodeGone, ROW_WRITE_CONFLICTS } from './openapi-errors.js';

/**
 * Order books (spec 2.14, 4.8): organization-level documents of type `orderbook` of the buyer, also at
 * `/doc/orderbook/{orderBookId}?organizationId=…`; their bindings, sync requests and sync logs.
 */
@ApiTags('supply chain: order books')
@Controller('organizations/:organizationId/orderbooks')
@RequireOrgRole('guest')
export class OrderBooksController {
  constructor(
    private readonly orderBooks: OrderBooksService,
    private readonly bindings: BindingsService,
    private readonly syncRequests: SyncRequestService,
    private readonly syncLogs: SyncLogService,
  ) {}

  @Post()
  @RequireScopes('doc:write')
  @ApiOperation({
    summary:
      'Create an order book (owners, admins, members): fields generated from sourceConnectionIds plus custom fields',
  })
  @ApiEnvelope(OrderBookResponseDto, { status: 201 })
  @ApiScConflict('INVALID_STATE: a source connection is disabled (payload connectionId, status)')
  @ApiShareCodeGone()
  create(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Body() dto: CreateOrderBookDto,
  ): Promise<OrderBookResponseDto> {
    return this.orderBooks.create(principal, organizationId, dto);
  }

  @Get()
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Order books of the organization' })
  @ApiEnvelope(OrderBookResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<OrderBookResponseDto>> {
    return this.orderBooks.list(principal, organizationId, query);
  }

  @Get(':orderBookId')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'One order book' })
  @ApiEnvelope(OrderBookResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
  ): Promise<OrderBookResponseDto> {
    return this.orderBooks.get(principal, organizationId, orderBookId);
  }

  @Get(':orderBookId/fields')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Fields; generated ones carry sourceCatalogId and sourceFieldId' })
  @ApiEnvelope(OrderBookFieldDto, { shape: 'page' })
  fields(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<OrderBookFieldDto>> {
    return this.orderBooks.fields(principal, organizationId, orderBookId, query);
  }

  @Post(':orderBookId/rows/batch-update')
  @HttpCode(200)
  @RequireScopes('data:write')
  @ApiOperation({
    summary:
      'Batch {rows: [{target{row}, values[], metadata}]}: update, or create rows without target; at most 1000, all or nothing',
  })
  @ApiEnvelope(BatchUpdateResultDto)
  @ApiScConflict(ROW_WRITE_CONFLICTS)
  batchUpdate(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Query() query: RequestIdQueryDto,
    @Body() body: BatchUpdateDto,
  ): Promise<BatchUpdateResultDto> {
    return this.orderBooks.batchUpdate(principal, organizationId, orderBookId, body, query.requestId);
  }

  @Post(':orderBookId/field-mapping/preview')
  @HttpCode(200)
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      'Suggested mapping of a connection to this order book (name and type similarity, with confidence)',
  })
  @ApiEnvelope(FieldMappingPreviewResultDto)
  @ApiScConflict('INVALID_STATE: the connection is disabled (payload connectionId, status)')
  @ApiShareCodeGone()
  preview(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Body() dto: FieldMappingPreviewDto,
  ): Promise<FieldMappingPreviewResultDto> {
    return this.orderBooks.preview(principal, organizationId, orderBookId, dto);
  }

  @Post(':orderBookId/bindings')
  @RequireScopes('doc:write')
  @ApiOperation({
    summary:
      'Bind to a connection (owners, admins, members): active at once when public or whitelisted; pending (supplier approves) in approval mode or with a shareCode',
  })
  @ApiEnvelope(BindingResponseDto, { status: 201 })
  @ApiScConflict('ALREADY_EXISTS: the order book has a live binding to the connection (payload bindingId, status); INVALID_STATE: the connection is disabled (payload connectionId, status)')
  @ApiShareCodeGone()
  bind(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Body() dto: CreateBindingDto,
  ): Promise<BindingResponseDto> {
    return this.bindings.create(principal, organizationId, orderBookId, dto);
  }

  @Get(':orderBookId/bindings')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Bindings of the order book' })
  @ApiEnvelope(BindingResponseDto, { shape: 'page' })
  listBindings(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Query() query: OrderBookBindingQueryDto,
  ): Promise<Page<BindingResponseDto>> {
    return this.bindings.list(principal, organizationId, orderBookId, query);
  }

  @Get(':orderBookId/bindings/:bindingId')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'One binding' })
  @ApiEnvelope(BindingResponseDto)
  getBinding(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Param('bindingId') bindingId: string,
  ): Promise<BindingResponseDto> {
    return this.bindings.get(principal, organizationId, orderBookId, bindingId);
  }

  @Get(':orderBookId/requests')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Sync requests (filter status, bindingId), newest first' })
  @ApiEnvelope(SyncRequestResponseDto, { shape: 'page' })
  listRequests(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Query() query: SyncRequestListQueryDto,
  ): Promise<Page<SyncRequestResponseDto>> {
    return this.syncRequests.list(principal, organizationId, orderBookId, query);
  }

  @Post(':orderBookId/requests')
  @RequireScopes('data:write')
  @ApiOperation({
    summary:
      'Create a sync request (changes create_row | update_row | delete_row; status pending | accepted | rejected)',
  })
  @ApiEnvelope(SyncRequestResponseDto, { status: 201 })
  @ApiScConflict('ALREADY_EXISTS: the organization has a sync request with this requestId (payload requestId); INVALID_STATE, CONFLICT: as for row writes')
  createRequest(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Body() dto: CreateSyncRequestDto,
  ): Promise<SyncRequestResponseDto> {
    return this.syncRequests.create(principal, organizationId, orderBookId, {
      ...dto,
      status: dto.status as SyncRequestStatus | undefined,
    });
  }

  @Get(':orderBookId/requests/:requestId')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'One sync request' })
  @ApiEnvelope(SyncRequestResponseDto)
  getRequest(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Param('requestId') requestId: string,
  ): Promise<SyncRequestResponseDto> {
    return this.syncRequests.get(principal, organizationId, orderBookId, requestId);
  }

  @Post(':orderBookId/requests/:requestId/accept')
  @HttpCode(200)
  // Accepting merges row changes into the order book: the scopes of a merge of them (requests:manage + data:write).
  @RequireScopes('requests:manage', 'data:write')
  @ApiOperation({ summary: 'pending → accepted: merges its document request' })
  @ApiEnvelope(SyncRequestResponseDto)
  @ApiScConflict('INVALID_STATE: the sync request is not pending (payload requestId, status); CONFLICT: the changes conflict with the order book (payload requestId, documentRequestId, conflicts)')
  accept(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Param('requestId') requestId: string,
    @Body() dto: ReviewNoteDto,
  ): Promise<SyncRequestResponseDto> {
    return this.syncRequests.decide(principal, organizationId, orderBookId, requestId, 'accept', reviewNoteOf(dto));
  }

  @Post(':orderBookId/requests/:requestId/reject')
  @HttpCode(200)
  @RequireScopes('requests:manage')
  @ApiOperation({ summary: 'pending → rejected: closes its document request' })
  @ApiEnvelope(SyncRequestResponseDto)
  @ApiScConflict('INVALID_STATE: the sync request is not pending (payload requestId, status)')
  reject(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Param('requestId') requestId: string,
    @Body() dto: ReviewNoteDto,
  ): Promise<SyncRequestResponseDto> {
    return this.syncRequests.decide(principal, organizationId, orderBookId, requestId, 'reject', reviewNoteOf(dto));
  }

  @Get(':orderBookId/sync-logs')
  @RequireScopes('doc:read')
  @ApiOperation({ summary: 'Sync log (filter bindingId, outcome), newest first' })
  @ApiEnvelope(SyncLogResponseDto, { shape: 'page' })
  syncLogsOf(
    @CurrentPrincipal() principal: Principal,
    @OrganizationIdParam() organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Query() query: SyncLogQueryDto,
  ): Promise<Page<SyncLogResponseDto>> {
    return this.syncLogs.list(principal, organizationId, orderBookId, query);
  }
}
