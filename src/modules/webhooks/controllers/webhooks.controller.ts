import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DeliveryDetailResponseDto } from '../dtos/webhook-delivery.dto.js';
import {
  CreateWebhookDto,
  NoQueryDto,
  TestWebhookDto,
  UpdateWebhookDto,
  WebhookListQueryDto,
  WebhookResponseDto,
  WebhookWithSecretResponseDto,
} from '../dtos/webhook.dto.js';
import { WebhooksService } from '../services/webhooks.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';
import { ORGANIZATION_HEADER, OrganizationHeader } from './webhook-request.decorators.js';
import { ApiWebhookLimitConflict, ApiWebhookNotFound } from './webhooks.openapi.js';

const ORGANIZATION_HEADER_DOC = {
  name: ORGANIZATION_HEADER,
  required: false,
  description: 'Organization context when the body or query names none (a UUID)',
};
const ORGANIZATION_NOT_FOUND = 'unknown organization, or one the caller is not an active member of';
const WEBHOOK_NOT_FOUND =
  "unknown webhook, one of another organization, or another user's all-organizations webhook";

@ApiTags('webhooks')
@Controller('webhooks')
@RequireScopes('webhooks:manage')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiHeader(ORGANIZATION_HEADER_DOC)
  @ApiOperation({
    summary: 'Create a webhook; the answer shows the signing secret (only here and on regenerate-secret)',
  })
  @ApiEnvelope(WebhookWithSecretResponseDto, { status: 201 })
  @ApiWebhookNotFound(ORGANIZATION_NOT_FOUND)
  @ApiWebhookLimitConflict()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: CreateWebhookDto,
    @Query() _query: NoQueryDto,
    @OrganizationHeader() organizationHeader: string | undefined,
  ): Promise<WebhookWithSecretResponseDto> {
    return this.webhooks.create(principal, dto, organizationHeader);
  }

  @Get()
  @ApiHeader(ORGANIZATION_HEADER_DOC)
  @ApiOperation({
    summary:
      "Webhooks of the organization (owners and admins: all; members: their own) and the caller's own all-organizations webhooks",
    description:
      "With no organization named and no default organization: only the caller's all-organizations webhooks.",
  })
  @ApiEnvelope(WebhookResponseDto, { shape: 'page' })
  @ApiWebhookNotFound(ORGANIZATION_NOT_FOUND)
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: WebhookListQueryDto,
    @OrganizationHeader() organizationHeader: string | undefined,
  ): Promise<Page<WebhookResponseDto>> {
    return this.webhooks.list(principal, query, organizationHeader);
  }

  @Get(':webhookId')
  @ApiOperation({ summary: 'One webhook' })
  @ApiEnvelope(WebhookResponseDto)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.get(principal, webhookId);
  }

  @Put(':webhookId')
  @ApiOperation({ summary: 'Update a webhook (fields left out keep their values)' })
  @ApiEnvelope(WebhookResponseDto)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.update(principal, webhookId, dto);
  }

  @Delete(':webhookId')
  @ApiOperation({ summary: 'Delete a webhook with its queue and delivery history' })
  @ApiEnvelope(null)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @NoBody() _body: undefined,
    @Query() _query: NoQueryDto,
  ): Promise<null> {
    return this.webhooks.remove(principal, webhookId);
  }

  @Post(':webhookId/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause: events keep queueing and are delivered in order on resume' })
  @ApiEnvelope(WebhookResponseDto)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  pause(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @NoBody() _body: undefined,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.pause(principal, webhookId);
  }

  @Post(':webhookId/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a paused or disabled webhook' })
  @ApiEnvelope(WebhookResponseDto)
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  resume(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @NoBody() _body: undefined,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.resume(principal, webhookId);
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Queue a test delivery of `event` with `payload` (default: a webhook_test event)',
  })
  @ApiEnvelope(DeliveryDetailResponseDto, { status: 202 })
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  test(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @Body() dto: TestWebhookDto,
    @Query() _query: NoQueryDto,
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
  @ApiWebhookNotFound(WEBHOOK_NOT_FOUND)
  regenerateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param('webhookId') webhookId: string,
    @NoBody() _body: undefined,
    @Query() _query: NoQueryDto,
  ): Promise<WebhookWithSecretResponseDto> {
    return this.webhooks.regenerateSecret(principal, webhookId);
  }
}
