import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import {
  DeliveryDetailResponseDto,
  DeliveryQueryDto,
  DeliveryResponseDto,
  WebhookStatsResponseDto,
} from '../dtos/webhook-delivery.dto.js';
import { NoQueryDto } from '../dtos/webhook.dto.js';
import { WebhookDeliveriesService } from '../services/webhook-deliveries.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';
import { ApiSkippedDeliveryConflict, ApiWebhookNotFound } from './webhooks.openapi.js';

const WEBHOOK_NOT_FOUND = 'unknown webhook, or one of another organization';
const DELIVERY_NOT_FOUND = 'unknown webhook or delivery, or a webhook of another organization';

@ApiTags('webhooks')
@Controller('webhooks/:webhookId')
@RequireScopes('webhooks:manage')
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @Get('deliveries')
  @ApiOperation({ summary: 'Delivery history, newest first; filter by status and event' })
  @ApiEnvelope(DeliveryResponseDto, { shape: 'page' })
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Query() query: DeliveryQueryDto,
  ): Promise<Page<DeliveryResponseDto>> {
    return this.deliveries.list(principal, webhookId, query);
  }

  @Get('deliveries/:deliveryId')
  @ApiOperation({
    summary: 'One delivery with its body and every attempt (request headers, response, duration, error)',
  })
  @ApiEnvelope(DeliveryDetailResponseDto)
  @ApiWebhookNotFound(DELIVERY_NOT_FOUND)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @Query() _query: NoQueryDto,
  ): Promise<DeliveryDetailResponseDto> {
    return this.deliveries.get(principal, webhookId, deliveryId);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send the same delivery (same deliveryId) again as a new attempt (a skipped one: 409)',
  })
  @ApiEnvelope(DeliveryDetailResponseDto, { status: 202 })
  @ApiWebhookNotFound(DELIVERY_NOT_FOUND)
  @ApiSkippedDeliveryConflict()
  redeliver(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @NoBody() _body: undefined,
    @Query() _query: NoQueryDto,
  ): Promise<DeliveryDetailResponseDto> {
    return this.deliveries.redeliver(principal, webhookId, deliveryId);
  }

  @Get('stats')
  @ApiOperation({
    summary: 'Counts by outcome, success rate, p50/p95 latency, last success and failure, failure streak',
  })
  @ApiEnvelope(WebhookStatsResponseDto)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  stats(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookStatsResponseDto> {
    return this.deliveries.stats(principal, webhookId);
  }
}
