import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import {
  ConnectorRunResponseDto,
  ConnectorScheduleResponseDto,
  CurrencyRatesResponseDto,
  PropagationJobResponseDto,
  PutCurrencyRatesDto,
} from '../dtos/sync-admin.dto.js';
import { SyncAdminService } from '../services/sync-admin.service.js';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

@ApiTags('supply-chain')
// Every route: an organization the caller is not a member of, or a connector / order book / binding that is not
// the organization's, is NOT_FOUND.
@ApiNotFoundResponse({
  description: 'NOT_FOUND: the organization (for the caller), connector, order book or binding',
  schema: ERROR_ENVELOPE_SCHEMA,
})
@Controller('organizations/:organizationId')
export class SyncAdminController {
  constructor(private readonly admin: SyncAdminService) {}

  @Get('currency-rates')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      "The organization's exchange-rate table (unit_convert with conversionType currency reads it; no network)",
  })
  @ApiEnvelope(CurrencyRatesResponseDto)
  listRates(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
  ): Promise<CurrencyRatesResponseDto> {
    return this.admin.listRates(principal, organizationId);
  }

  @Put('currency-rates')
  @RequireScopes('doc:write')
  @ApiOperation({ summary: 'Replace the exchange-rate table (owners and admins)' })
  @ApiEnvelope(CurrencyRatesResponseDto)
  putRates(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
    @Body() dto: PutCurrencyRatesDto,
  ): Promise<CurrencyRatesResponseDto> {
    return this.admin.putRates(principal, organizationId, dto);
  }

  @Get('connectors/:connectorId/runs')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      "A connector's runs, newest first (realtime, scheduled and manual; each with its counts and error)",
  })
  @ApiEnvelope(ConnectorRunResponseDto, { shape: 'page' })
  listRuns(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
    @Param('connectorId') connectorId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ConnectorRunResponseDto>> {
    return this.admin.listRuns(principal, organizationId, connectorId, query);
  }

  @Get('connectors/:connectorId/schedule')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      'When a scheduled connector runs next (cron and timezone of its scheduleConfig) and when it last ran',
  })
  @ApiEnvelope(ConnectorScheduleResponseDto)
  schedule(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<ConnectorScheduleResponseDto> {
    return this.admin.schedule(principal, organizationId, connectorId);
  }

  @Post('connectors/:connectorId/run')
  @HttpCode(202)
  @RequireScopes('doc:write')
  @ApiOperation({
    summary: 'Run a connector now: a full reconciliation of every source row (runs after the answer)',
  })
  @ApiEnvelope(ConnectorRunResponseDto, { status: 202 })
  runNow(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
    @Param('connectorId') connectorId: string,
  ): Promise<ConnectorRunResponseDto> {
    return this.admin.runNow(principal, organizationId, connectorId);
  }

  @Get('orderbooks/:orderBookId/bindings/:bindingId/propagation')
  @RequireScopes('doc:read')
  @ApiOperation({
    summary:
      "A binding's propagation ledger: one entry per catalog revision (pending in its batch window, applied, skipped, failed)",
  })
  @ApiEnvelope(PropagationJobResponseDto, { shape: 'page' })
  listJobs(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId', new UuidParamPipe('organization')) organizationId: string,
    @Param('orderBookId') orderBookId: string,
    @Param('bindingId') bindingId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<PropagationJobResponseDto>> {
    return this.admin.listJobs(principal, organizationId, orderBookId, bindingId, query);
  }
}
