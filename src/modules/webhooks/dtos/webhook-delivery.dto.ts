import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { DOMAIN_EVENT_TYPES } from '../../events/event-catalogue.js';
import {
  type AttemptRow,
  DELIVERY_STATUSES,
  type DeliveryKind,
  type DeliveryRow,
  type DeliveryStatsRow,
  type DeliveryStatus,
} from '../repositories/webhook-delivery.repository.js';
import { WEBHOOK_STATUSES, type WebhookRow, type WebhookStatus } from '../repositories/webhook.repository.js';
import { TEST_EVENT } from './webhook.dto.js';

/** What a delivery can be of: a catalogue event, or a test delivery's default event. */
const DELIVERY_EVENTS: readonly string[] = [...DOMAIN_EVENT_TYPES, TEST_EVENT];

export class DeliveryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
  // Checked like `status`: a misspelt type would otherwise answer an empty page, as if nothing had been sent.
  @ApiPropertyOptional({ description: 'Event type', enum: DELIVERY_EVENTS, example: 'request_merged' })
  @IsOptional()
  @IsString()
  @IsIn(DELIVERY_EVENTS, {
    message: 'event must be an event type of the catalogue (spec 6.2) or webhook_test',
  })
  event?: string;
}

export class DeliveryAttemptDto {
  @ApiProperty({ description: '1 for the first attempt of the delivery' }) attempt: number;
  @ApiProperty({ description: 'A redelivery or test rather than an automatic attempt' }) manual: boolean;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) requestHeaders: Record<
    string,
    string
  >;
  @ApiProperty({ nullable: true, type: Number }) responseStatus: number | null;
  @ApiProperty({ nullable: true, type: String, description: 'At most the first 2048 bytes of the answer' })
  responseBody: string | null;
  @ApiProperty() durationMs: number;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty() success: boolean;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the retry this failure scheduled is due',
  })
  nextRetryAt: string | null;
}

export class DeliveryResponseDto {
  @ApiProperty({
    format: 'uuid',
    description: "Stable across retries and redeliveries: the receiver's idempotency key",
  })
  deliveryId: string;
  @ApiProperty({ format: 'uuid' }) webhookId: string;
  @ApiProperty({ example: 'request_merged' }) event: string;
  @ApiProperty({ enum: ['event', 'test'] }) kind: DeliveryKind;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ nullable: true, type: String, description: 'null for tests and for skipped deliveries' })
  docType: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'null for tests and for skipped deliveries' })
  docId: string | null;
  @ApiProperty({ description: 'Attempts made so far' }) attempts: number;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the next attempt is due (queued deliveries)',
  })
  nextRetryAt: string | null;
  @ApiProperty({ nullable: true, type: Number }) responseStatus: number | null;
  @ApiProperty({ nullable: true, type: Number }) durationMs: number | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastAttemptAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) finishedAt: string | null;
}

export class DeliveryDetailResponseDto extends DeliveryResponseDto {
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "The raw JSON body sent (the same bytes on every attempt); null when the webhook's creator may not read the " +
      "event (the document's view permissions included), when the webhook's credentialScopes or the calling " +
      'credential lack the scope that reads it (data:read for data_* events, doc:read for the other document events), ' +
      'and for a skipped delivery (its body was dropped)',
  })
  requestBody: string | null;
  @ApiProperty({ type: [DeliveryAttemptDto], description: 'Newest first' }) attemptLog: DeliveryAttemptDto[];
}

class DeliveryCountsDto {
  @ApiProperty() pending: number;
  @ApiProperty() retrying: number;
  @ApiProperty() succeeded: number;
  @ApiProperty() failed: number;
  @ApiProperty() skipped: number;
  @ApiProperty() total: number;
}

class AttemptCountsDto {
  @ApiProperty() total: number;
  @ApiProperty() succeeded: number;
  @ApiProperty() failed: number;
}

class LatencyDto {
  @ApiProperty({ nullable: true, type: Number }) p50: number | null;
  @ApiProperty({ nullable: true, type: Number }) p95: number | null;
}

export class WebhookStatsResponseDto {
  @ApiProperty({ format: 'uuid' }) webhookId: string;
  @ApiProperty({ enum: WEBHOOK_STATUSES }) status: WebhookStatus;
  @ApiProperty({ type: DeliveryCountsDto, description: 'Deliveries by outcome' })
  deliveries: DeliveryCountsDto;
  @ApiProperty({ type: AttemptCountsDto }) attempts: AttemptCountsDto;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Successful attempts / attempts (0..1); null before the first attempt',
  })
  successRate: number | null;
  @ApiProperty({ type: LatencyDto, description: 'Attempt durations in milliseconds' }) latencyMs: LatencyDto;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastSuccessAt: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) lastFailureAt: string | null;
  @ApiProperty() consecutiveFailures: number;
}

function iso(value: Date | null): string | null {
  return value ? new Date(value).toISOString() : null;
}

/**
 * Skipped because the webhook's creator (or its credential) may not read the event: its document is not named and
 * its body was dropped. A delivery skipped because its filters could not be evaluated within their work budget
 * keeps both (docs/webhooks.md, "Filter work") and may be redelivered.
 */
export function isHiddenSkip(row: Pick<DeliveryRow, 'status' | 'requestBody'>): boolean {
  return row.status === 'skipped' && row.requestBody === '';
}

export function toDeliveryResponse(row: DeliveryRow): DeliveryResponseDto {
  const queued = row.status === 'pending' || row.status === 'retrying';
  const skipped = isHiddenSkip(row);
  return {
    deliveryId: row.id,
    webhookId: row.webhookId,
    event: row.eventType,
    kind: row.kind,
    status: row.status,
    docType: skipped ? null : row.docType,
    docId: skipped ? null : row.docId,
    attempts: row.attempts,
    nextRetryAt: queued ? iso(row.nextAttemptAt) : null,
    responseStatus: row.lastStatusCode,
    durationMs: row.lastDurationMs,
    error: row.lastError,
    lastAttemptAt: iso(row.lastAttemptAt),
    createdAt: new Date(row.createdAt).toISOString(),
    finishedAt: iso(row.finishedAt),
  };
}

/**
 * `bodyReadable`: whether the event may be shown to this caller now (WebhookDeliveriesService; tests: always);
 * deliveries skipped for access have none.
 */
export function toDeliveryDetail(
  row: DeliveryRow,
  attempts: AttemptRow[],
  bodyReadable: boolean,
): DeliveryDetailResponseDto {
  return {
    ...toDeliveryResponse(row),
    requestBody: bodyReadable && !isHiddenSkip(row) ? row.requestBody : null,
    attemptLog: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      manual: attempt.manual,
      requestHeaders: attempt.requestHeaders,
      responseStatus: attempt.responseStatus,
      responseBody: attempt.responseBody,
      durationMs: attempt.durationMs,
      error: attempt.error,
      success: attempt.success,
      startedAt: new Date(attempt.startedAt).toISOString(),
      nextRetryAt: iso(attempt.nextRetryAt),
    })),
  };
}

export function toStatsResponse(webhook: WebhookRow, stats: DeliveryStatsRow): WebhookStatsResponseDto {
  const round = (value: number | null): number | null =>
    value === null ? null : Math.round(Number(value) * 10) / 10;
  return {
    webhookId: webhook.id,
    status: webhook.status,
    deliveries: {
      pending: stats.pending,
      retrying: stats.retrying,
      succeeded: stats.succeeded,
      failed: stats.failed,
      skipped: stats.skipped,
      total: stats.pending + stats.retrying + stats.succeeded + stats.failed + stats.skipped,
    },
    attempts: { total: stats.attempts, succeeded: stats.successfulAttempts, failed: stats.failedAttempts },
    successRate: stats.attempts > 0 ? stats.successfulAttempts / stats.attempts : null,
    latencyMs: { p50: round(stats.p50), p95: round(stats.p95) },
    lastSuccessAt: iso(stats.lastSuccessAt),
    lastFailureAt: iso(stats.lastFailureAt),
    consecutiveFailures: webhook.consecutiveFailures,
  };
}
