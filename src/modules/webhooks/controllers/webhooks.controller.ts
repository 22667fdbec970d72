import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DeliveryDetailResponseDto } from '../dtos/webhook-delivery.dto.js';
import {
  CreateWebhookDto,
  TestWebhookDto,
  UpdateWebhookDto,
  WebhookListQueryDto,
  WebhookResponseDto,
  WebhookWithSecretResponseDto,
} from '../dtos/webhook.dto.js';
import { WebhooksService } from '../services/webhooks.service.js';

const ORGANIZATION_HEADER = {
  name: 'X-Organization-Id',
  required: false,
  description: 'Organization context when the body or query names none',
};

@ApiTags('webhooks')
@Controller('webhooks')
@RequireScopes('webhooks:manage')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiHeader(ORGANIZATION_HEADER)
  @ApiOperation({
    summary: 'Create a webhook; the answer shows the signing secret (only here and on regenerate-secret)',
  })
  @ApiEnvelope(WebhookWithSecretResponseDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: CreateWebhookDto,
    @Headers('x-organization-id') organizationHeader?: string,
  ): Promise<WebhookWithSecretResponseDto> {
    return this.webhooks.create(principal, dto, organizationHeader);
  }

  @Get()
  @ApiHeader(ORGANIZATION_HEADER)
  @ApiOperation({ summary: 'Webhooks of the organization (owners and admins: all; members: their own)' })
  @ApiEnvelope(WebhookResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: WebhookListQueryDto,
    @Headers('x-organization-id') organizationHeader?: string,
  ): Promise<Page<WebhookResponseDto>> {
    return this.webhooks.list(principal, query, organizationHeader);
  }

  @Get(':webhookId')
  @ApiOperation({ summary: 'One webhook' })
  @ApiEnvelope(WebhookResponseDto)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.get(principal, webhookId);
  }

  @Put(':webhookId')
  @ApiOperation({ summary: 'Update a webhook (fields left out keep their values)' })
  @ApiEnvelope(WebhookResponseDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.update(principal, webhookId, dto);
  }

  @Delete(':webhookId')
  @ApiOperation({ summary: 'Delete a webhook with its queue and delivery history' })
  @ApiEnvelope(null)
  remove(@CurrentPrincipal() principal: Principal, @Param('webhookId') webhookId: string): Promise<null> {
    return this.webhooks.remove(principal, webhookId);
  }

  @Post(':webhookId/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause: events keep queueing and are delivered in order on resume' })
  @ApiEnvelope(WebhookResponseDto)
  pause(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.pause(principal, webhookId);
  }

  @Post(':webhookId/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a paused or disabled webhook' })
  @ApiEnvelope(WebhookResponseDto)
  resume(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.resume(principal, webhookId);
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Queue a test delivery of `event` with `payload` (default: a webhook_test event)',
  })
  @ApiEnvelope(DeliveryDetailResponseDto, { status: 202 })
  test(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Body() dto: TestWebhookDto,
  ): Promise<DeliveryDetailResponseDto> {
    return this.webhooks.test(principal, webhookId, dto);
  }

  @Post(':webhookId/regenerate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: 'New signing secret; the previous one keeps signing for the grace period',
    description:
      'X-Webhook-Signature then carries the new secret\'s signature and X-Webhook-Signature-Previous the previous secret\'s, until previousSecretExpiresAt (docs/webhooks.md, "Rotation").',
  })
  @ApiEnvelope(WebhookWithSecretResponseDto)
  regenerateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
  ): Promise<WebhookWithSecretResponseDto> {
    return this.webhooks.regenerateSecret(principal, webhookId);
  }
}
