import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { PresentNotNull, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import { DOMAIN_EVENT_TYPES } from '../../events/event-catalogue.js';
import { WEBHOOK_STATUSES, type WebhookRow, type WebhookStatus } from '../repositories/webhook.repository.js';
import { CONDITION_OPERATORS, type WebhookFilters } from '../services/webhook-filter.js';

/** `*` subscribes to every event of the catalogue, including types added later. */
export const ALL_EVENTS = '*';
export const SUBSCRIBABLE_EVENTS: readonly string[] = [...DOMAIN_EVENT_TYPES, ALL_EVENTS];
export const TEST_EVENT = 'webhook_test';

export const WEBHOOK_LIMITS = {
  timeout: { min: 1, max: 60, default: 30 },
  maxRetries: { min: 0, max: 10, default: 3 },
  retryInterval: { min: 1, max: 86_400, default: 60 },
} as const;

/** Swagger shape of a condition; the body is checked by filtersProblems (webhook-filter.ts). */
export class WebhookConditionDocDto {
  @ApiProperty({
    example: '$.payload.status',
    description: "JSONPath into the delivery envelope ($, .name, ..name, .*, [n], [*], ['name']; at most one ..)",
  })
  path: string;
  @ApiProperty({ enum: CONDITION_OPERATORS }) operator: string;
  // Any JSON value: `{type: object}`, what @nestjs/swagger makes of `unknown`, refused the string of the example.
  @ApiPropertyOptional({
    ...ANY_JSON_SCHEMA,
    description: 'in/notIn: array; range: [min, max]; exists: true/false (default true)',
    example: 'merged',
  })
  value?: unknown;
}

export class WebhookFiltersDocDto {
  @ApiPropertyOptional({ type: [String] }) docTypes?: string[];
  @ApiPropertyOptional({ type: [String] }) docIds?: string[];
  @ApiPropertyOptional({ type: [String], description: 'Matched against triggeredBy' }) userIds?: string[];
  @ApiPropertyOptional({ type: [WebhookConditionDocDto] }) conditions?: WebhookConditionDocDto[];
}

const filtersDoc = {
  type: WebhookFiltersDocDto,
  description: 'All given kinds must match; within a list any entry may. Conditions all must hold.',
};

export class CreateWebhookDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: "Owning organization; else X-Organization-Id, else the caller's default organization",
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;

  @ApiPropertyOptional({
    default: false,
    description:
      'true: the webhook follows its creator, receiving the events of every organization the creator is an active member of ' +
      '(only those the creator may read), and is managed by its creator alone. false: the events of its own organization only',
  })
  @IsOptional()
  @IsBoolean()
  allOrganizations?: boolean;

  @ApiProperty({ maxLength: 200, minLength: 1 }) @Trimmed() @IsString() @MinLength(1) @MaxLength(200) name: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiProperty({
    example: 'https://example.com/hooks/quire',
    description: 'http or https; must resolve to a public address. Surrounding whitespace is removed.',
    maxLength: 2000,
  })
  @IsString()
  @MaxLength(2000)
  url: string;

  @ApiProperty({
    enum: [...SUBSCRIBABLE_EVENTS],
    isArray: true,
    example: ['request_merged', 'data_bulk_operation'],
    description: 'Event types of spec 6.2, or * for all',
    minItems: 1,
    maxItems: 100,
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @IsIn(SUBSCRIBABLE_EVENTS, {
    each: true,
    message: 'events must be event types of the catalogue (spec 6.2) or *',
  })
  events: string[];

  @ApiPropertyOptional(filtersDoc) @IsOptional() @IsObject() filters?: WebhookFilters;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 60, default: 30, description: 'Seconds' })
  @IsOptional()
  @IsInt()
  @Min(WEBHOOK_LIMITS.timeout.min)
  @Max(WEBHOOK_LIMITS.timeout.max)
  timeout?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 10, default: 3 })
  @IsOptional()
  @IsInt()
  @Min(WEBHOOK_LIMITS.maxRetries.min)
  @Max(WEBHOOK_LIMITS.maxRetries.max)
  maxRetries?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 86_400,
    default: 60,
    description: 'Seconds before the first retry; doubles per retry',
  })
  @IsOptional()
  @IsInt()
  @Min(WEBHOOK_LIMITS.retryInterval.min)
  @Max(WEBHOOK_LIMITS.retryInterval.max)
  retryInterval?: number;
}

/**
 * PUT: the fields given replace the stored ones; fields left out keep their values. `null` clears `description` and
 * resets `filters` to `{}`; the other fields have no empty value, so `null` is refused (PresentNotNull). The body may
 * be the webhook as GET answers it (as views and settings accept their read form): `id` must then be the path's, the
 * other read-only keys are accepted and ignored, whatever their value; any other unknown key is refused.
 */
export class UpdateWebhookDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: "The webhook's id; when given it must be the id in the path (read form sent back)",
  })
  @PresentNotNull()
  @IsString()
  id?: string;

  @ApiPropertyOptional({ maxLength: 200, minLength: 1 })
  @PresentNotNull()
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;
  @ApiPropertyOptional({ maxLength: 2000, nullable: true, type: String, description: 'null clears it' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;
  @ApiPropertyOptional({ description: 'Surrounding whitespace is removed', maxLength: 2000 })
  @PresentNotNull()
  @IsString()
  @MaxLength(2000)
  url?: string;

  @ApiPropertyOptional({ enum: [...SUBSCRIBABLE_EVENTS], isArray: true, description: 'Event types of spec 6.2, or * for all', minItems: 1, maxItems: 100 })
  @PresentNotNull()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @IsIn(SUBSCRIBABLE_EVENTS, {
    each: true,
    message: 'events must be event types of the catalogue (spec 6.2) or *',
  })
  events?: string[];

  @ApiPropertyOptional({
    ...filtersDoc,
    nullable: true,
    description: `${filtersDoc.description} null resets to {}.`,
  })
  @IsOptional()
  @IsObject()
  filters?: WebhookFilters | null;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 60 })
  @PresentNotNull()
  @IsInt()
  @Min(WEBHOOK_LIMITS.timeout.min)
  @Max(WEBHOOK_LIMITS.timeout.max)
  timeout?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 10 })
  @PresentNotNull()
  @IsInt()
  @Min(WEBHOOK_LIMITS.maxRetries.min)
  @Max(WEBHOOK_LIMITS.maxRetries.max)
  maxRetries?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 86_400 })
  @PresentNotNull()
  @IsInt()
  @Min(WEBHOOK_LIMITS.retryInterval.min)
  @Max(WEBHOOK_LIMITS.retryInterval.max)
  retryInterval?: number;

  // The read-only keys of WebhookResponseDto: a webhook read can be sent back (ignored, whatever their value).
  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() allOrganizations?: unknown;
  @ReadOnlyEcho() credentialScopes?: unknown;
  @ReadOnlyEcho() status?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() consecutiveFailures?: unknown;
  @ReadOnlyEcho() disabledAt?: unknown;
  @ReadOnlyEcho() disabledReason?: unknown;
  @ReadOnlyEcho() secretRotatedAt?: unknown;
  @ReadOnlyEcho() previousSecretExpiresAt?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class WebhookListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Organization to list; else X-Organization-Id, else the default organization',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;
}

/**
 * The query of the webhook routes that take no parameter: with the global whitelist, an unknown parameter is
 * VALIDATION_ERROR ("property x should not exist"), as on the list routes, instead of being ignored.
 */
export class NoQueryDto {}

export class TestWebhookDto {
  @ApiPropertyOptional({
    enum: [...DOMAIN_EVENT_TYPES, TEST_EVENT],
    description: `An event type of spec 6.2, or ${TEST_EVENT} (the default)`,
    example: 'request_merged',
  })
  @IsOptional()
  @IsIn([...DOMAIN_EVENT_TYPES, TEST_EVENT])
  event?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Payload to send (default: a short test payload)',
  })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;
}

export class WebhookResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({
    format: 'uuid',
    description:
      'The organization it belongs to; for an all-organizations webhook, the one it was created in (it belongs to its creator)',
  })
  organizationId: string;
  @ApiProperty({
    description:
      'true when created without organizationId / X-Organization-Id: it receives the events of every organization its creator is an active member of (always only what the creator may read), and only its creator sees and manages it',
  })
  allOrganizations: boolean;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty(filtersDoc) filters: WebhookFilters;
  @ApiProperty({ description: 'Seconds' }) timeout: number;
  @ApiProperty() maxRetries: number;
  @ApiProperty({ description: 'Seconds' }) retryInterval: number;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: ['doc:read', 'webhooks:manage'],
    description:
      "Scopes of the credential that created the webhook (a first-party session: every scope), narrowed to those a later PUT's credential also holds. Only events these read through the API are delivered: row events (data_*) need data:read, the other document events doc:read. null: created before scopes were recorded, unrestricted.",
  })
  credentialScopes: string[] | null;
  @ApiProperty({ enum: WEBHOOK_STATUSES }) status: WebhookStatus;
  @ApiProperty({ format: 'uuid' }) createdBy: string;
  @ApiProperty({ description: 'Failed automatic attempts since the last success' })
  consecutiveFailures: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) disabledAt: string | null;
  @ApiProperty({ nullable: true, type: String }) disabledReason: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) secretRotatedAt: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Until then the previous secret signs too',
  })
  previousSecretExpiresAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WebhookWithSecretResponseDto extends WebhookResponseDto {
  @ApiProperty({
    description: 'Signing secret (whsec_ + base64). Shown only here and by regenerate-secret.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;
}

function iso(value: Date | null): string | null {
  return value ? new Date(value).toISOString() : null;
}

export function toWebhookResponse(row: WebhookRow): WebhookResponseDto {
  const rotationLive =
    row.previousSecretExpiresAt && new Date(row.previousSecretExpiresAt).getTime() > Date.now();
  return {
    id: row.id,
    organizationId: row.organizationId,
    allOrganizations: row.allOrganizations,
    name: row.name,
    description: row.description,
    url: row.url,
    events: row.events,
    filters: row.filters,
    timeout: row.timeoutSeconds,
    maxRetries: row.maxRetries,
    retryInterval: row.retryIntervalSeconds,
    credentialScopes: row.credentialScopes,
    status: row.status,
    createdBy: row.createdBy,
    consecutiveFailures: row.consecutiveFailures,
    disabledAt: iso(row.disabledAt),
    disabledReason: row.disabledReason,
    secretRotatedAt: iso(row.secretRotatedAt),
    previousSecretExpiresAt: rotationLive ? iso(row.previousSecretExpiresAt) : null,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}
