import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { Trimmed } from '../../../common/http/validation-decorators.js';
import {
  ACCEPT_MODES,
  BINDING_STATUSES,
  CONFLICT_STRATEGIES,
  DEDUPLICATION_STRATEGIES,
  PROPAGATION_MODES,
  SYNC_CHANGE_OPERATIONS,
  SYNC_LOG_OUTCOMES,
  SYNC_REQUEST_STATUSES,
  TRANSFORM_TYPES,
  UNMAPPED_FIELDS,
} from '../domain/supply-chain.types.js';
import { SYNC_REQUEST_ID_PATTERN, SYNC_REQUEST_ID_RULE } from '../domain/sync-request-id.js';
import { FieldInputDto } from './catalog.dto.js';
import { FilterGroupDocDto, ScFieldDto } from './common.dto.js';

export class CreateOrderBookDto {
  @ApiProperty({ minLength: 1, maxLength: 255 }) @Trimmed() @IsString() @MinLength(1) @MaxLength(255) name: string;
  @ApiPropertyOptional({ maxLength: 10_000 }) @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: 'Connections whose catalog fields become generated fields',
    maxItems: 50,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsUUID('all', { each: true })
  sourceConnectionIds?: string[];
  @ApiPropertyOptional({
    description: 'A share code letting the organization read connections outside their whitelist',
    maxLength: 128,
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  shareCode?: string;
  @ApiPropertyOptional({ type: [FieldInputDto], description: 'Custom fields', maxItems: 500 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => FieldInputDto)
  fields?: FieldInputDto[];
}

export class GeneratedFieldDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() type: string;
  @ApiProperty({ format: 'uuid' }) sourceCatalogId: string;
  @ApiProperty() sourceFieldId: string;
  @ApiProperty({ format: 'uuid' }) connectionId: string;
}

export class OrderBookResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Also the document id: /doc/orderbook/{id}?organizationId=…' })
  id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ nullable: true, type: String }) workspaceId: null;
  @ApiProperty({ example: 'orderbook' }) docType: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: [String] }) sourceConnectionIds: string[];
  @ApiProperty({ type: [GeneratedFieldDto] }) generatedFields: GeneratedFieldDto[];
  @ApiProperty({ type: [ScFieldDto], description: 'Every field (generated and custom)' })
  fields: ScFieldDto[];
  @ApiProperty({ type: 'integer' }) rowCount: number;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class OrderBookFieldDto extends ScFieldDto {
  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String }) sourceCatalogId?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) sourceFieldId?: string | null;
}

export class FieldMappingPreviewDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() connectionId: string;
  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) shareCode?: string;
}

export class SuggestedMappingDto {
  @ApiProperty() sourceFieldId: string;
  @ApiProperty() sourceFieldName: string;
  @ApiProperty() sourceType: string;
  @ApiProperty() targetFieldId: string;
  @ApiProperty() targetFieldName: string;
  @ApiProperty() targetType: string;
  @ApiProperty({ description: '0..1' }) confidence: number;
  @ApiProperty({ enum: ['direct', 'type_convert', 'option_mapping'] }) transformType: string;
  @ApiProperty({ enum: ['generated_from_source', 'same_name', 'similar_name'] }) reason: string;
}

export class FieldBriefDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() type: string;
}

export class FieldMappingPreviewResultDto {
  @ApiProperty({ type: [SuggestedMappingDto] }) suggestedMappings: SuggestedMappingDto[];
  @ApiProperty({ type: [FieldBriefDto] }) unmappedSourceFields: FieldBriefDto[];
  @ApiProperty({ type: [FieldBriefDto] }) unmappedTargetFields: FieldBriefDto[];
}

export class FieldMappingRuleDocDto {
  @ApiProperty() sourceFieldId: string;
  @ApiProperty() targetFieldId: string;
  @ApiPropertyOptional({ type: [String], description: 'merge: 2+ source fields' }) sourceFieldIds?: string[];
  @ApiPropertyOptional({ type: [String], description: 'split: 2+ target fields' }) targetFieldIds?: string[];
  @ApiPropertyOptional({ description: 'merge/split separator (default a space)' }) separator?: string;
  @ApiPropertyOptional({ default: true }) enabled?: boolean;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ enum: TRANSFORM_TYPES, default: 'direct' }) transformType?: string;
  @ApiPropertyOptional({ enum: PROPAGATION_MODES, default: 'oneway' }) propagationMode?: string;
  @ApiPropertyOptional({
    type: 'object',
    description:
      '{sourceUnit, targetUnit, conversionType: currency|weight|length, exchangeRateSource: daily|realtime, fixedRate, customRate} or {fromUnit, toUnit, rate}',
    additionalProperties: true,
  })
  unitConversion?: unknown;
  @ApiPropertyOptional({
    type: 'object',
    description: '{template} with ${value}',
    additionalProperties: true,
  })
  formatConfig?: unknown;
  @ApiPropertyOptional({
    type: 'object',
    description: '{mappings: {source: target}, unmappedStrategy: keep_original|clear}',
    additionalProperties: true,
  })
  optionMapping?: unknown;
  @ApiPropertyOptional({ description: 'formula over the source row, e.g. {price} * 1.2' }) formula?: string;
}

export class FieldMappingDocDto {
  @ApiProperty({ type: [FieldMappingRuleDocDto] }) rules: FieldMappingRuleDocDto[];
  @ApiPropertyOptional({ enum: UNMAPPED_FIELDS, default: 'ignore' }) unmappedFields?: string;
}

export class ReceiverFilterDocDto {
  @ApiPropertyOptional({ type: FilterGroupDocDto, description: 'On catalog (source) field ids' })
  filterGroup?: FilterGroupDocDto;
  @ApiPropertyOptional({ enum: ACCEPT_MODES, default: 'auto' }) acceptMode?: string;
  @ApiPropertyOptional({
    type: 'object',
    description:
      '{autoAcceptIf, requireApprovalIf, autoRejectIf: filter groups; defaultAction: manual|accept}',
    additionalProperties: true,
  })
  manualAcceptRules?: unknown;
  @ApiPropertyOptional({ enum: DEDUPLICATION_STRATEGIES }) deduplicationStrategy?: string;
  @ApiPropertyOptional({ type: [String], description: 'Order-book field ids' })
  deduplicationFieldIds?: string[];
}

export class ConflictResolutionDocDto {
  @ApiPropertyOptional({ enum: CONFLICT_STRATEGIES, default: 'keep_upstream' }) defaultStrategy?: string;
  @ApiPropertyOptional({
    type: 'object',
    description: 'order-book field id → {strategy}',
    additionalProperties: true,
  })
  fieldStrategies?: unknown;
}

export class CreateBindingDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() connectionId: string;
  @ApiPropertyOptional({ format: 'uuid', description: 'Must equal the order book of the path when given' })
  @IsOptional()
  @IsUUID()
  targetOrderBookId?: string;
  @ApiPropertyOptional({
    description:
      'A share code of the connection (the last segment of its shareUrl): lets in an organization outside the whitelist; the binding waits for approval',
    maxLength: 128,
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  shareCode?: string;
  @ApiPropertyOptional({
    type: FieldMappingDocDto,
    description: 'Default: the connection suggestion, else direct rules to the fields generated from it',
  })
  @IsOptional()
  @IsObject()
  fieldMapping?: unknown;
  @ApiPropertyOptional({ type: ReceiverFilterDocDto }) @IsOptional() @IsObject() receiverFilter?: unknown;
  @ApiPropertyOptional({ type: ConflictResolutionDocDto })
  @IsOptional()
  @IsObject()
  conflictResolution?: unknown;
}

export class BindingResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) connectionId: string;
  @ApiProperty({ format: 'uuid' }) targetOrderBookId: string;
  @ApiProperty({ format: 'uuid' }) sourceCatalogId: string;
  @ApiProperty({ format: 'uuid' }) supplierOrganizationId: string;
  @ApiProperty({ enum: BINDING_STATUSES }) status: string;
  @ApiProperty({ enum: ['public', 'whitelist', 'approval', 'share_link'] }) admittedVia: string;
  @ApiProperty({ type: FieldMappingDocDto }) fieldMapping: unknown;
  @ApiProperty({ type: ReceiverFilterDocDto }) receiverFilter: unknown;
  @ApiProperty({ type: ConflictResolutionDocDto }) conflictResolution: unknown;
  @ApiProperty({ nullable: true, type: String }) reviewNote: string | null;
  @ApiProperty({ nullable: true, type: String }) reviewedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) activatedAt: string | null;
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class OrderBookBindingQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: BINDING_STATUSES }) @IsOptional() @IsIn(BINDING_STATUSES) status?: string;
}

/**
 * A ValueEntry of a sync change. Unlike a row's (which leaves empty fields out), a change names every field it
 * carries: `null` clears the field on `update_row` and leaves it empty on `create_row` — the propagation sends an
 * unset catalog field that way.
 */
export class SyncValueEntryDto {
  @ApiProperty() fieldId: string;
  @ApiProperty({
    ...ANY_JSON_SCHEMA,
    nullable: true,
    description:
      'A Value or one of its write forms (docs/values.md: a plain string, number, id…), answered as sent; ' +
      'or null: clears the field (update_row), leaves it empty (create_row)',
    example: { text: 'hello' },
  })
  value: unknown;
}

@ApiExtraModels(SyncValueEntryDto)
export class SyncChangeDocDto {
  @ApiProperty({ enum: SYNC_CHANGE_OPERATIONS }) operation: string;
  @ApiPropertyOptional({ description: 'Order-book row id (update_row, delete_row; optional for create_row)' })
  rowId?: string;
  @ApiPropertyOptional({
    description: 'ValueEntry array or object of field id to Value (answered as the ValueEntry array)',
    oneOf: [{ type: 'array', items: { $ref: getSchemaPath(SyncValueEntryDto) } }, { type: 'object', additionalProperties: true }],
  })
  values?: unknown;
  @ApiPropertyOptional({ description: 'Catalog row it came from' }) sourceRowId?: string;
}

export class CreateSyncRequestDto {
  @ApiPropertyOptional({
    pattern: SYNC_REQUEST_ID_PATTERN.source,
    maxLength: 128,
    example: 'req-2024-0001',
    description:
      'The sync request id, chosen by the client: letters, digits and . _ ~ : - (a UUID is stored in lower case); ' +
      'unique within the organization (idempotency: a second POST with it is ALREADY_EXISTS); a UUID is generated when absent',
  })
  @IsOptional()
  @IsString()
  @Matches(SYNC_REQUEST_ID_PATTERN, { message: SYNC_REQUEST_ID_RULE })
  requestId?: string;
  @ApiPropertyOptional({
    default: 'manual',
    description: 'A string: catalog_sync (propagation), manual, import…',
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  requestType?: string;
  @ApiPropertyOptional({
    type: 'object',
    description: 'Where it comes from, e.g. {bindingId, connectionId, catalogId, catalogRevisionId}',
    additionalProperties: true,
  })
  @IsOptional()
  @IsObject()
  source?: Record<string, unknown>;
  @ApiProperty({ type: [SyncChangeDocDto], minItems: 1, maxItems: 1000, description: 'One to 1000 changes (an empty list is VALIDATION_ERROR)' }) @IsArray() @ArrayMaxSize(1000) @Allow() changes: unknown[];
  @ApiPropertyOptional({
    enum: SYNC_REQUEST_STATUSES,
    default: 'pending',
    description: 'pending: an open request waits; accepted: merged at once; rejected: recorded only',
  })
  @IsOptional()
  @IsIn(SYNC_REQUEST_STATUSES)
  status?: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) message?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Shown in the orderbook_sync_request_created event',
  })
  @IsOptional()
  @IsObject()
  productInfo?: Record<string, unknown>;
}

export class SyncRequestResponseDto {
  @ApiProperty({ description: 'The sync request id: as the client chose it (requestId), or a generated UUID' }) requestId: string;
  @ApiProperty({ format: 'uuid' }) orderBookId: string;
  @ApiProperty({ nullable: true, type: String }) bindingId: string | null;
  @ApiProperty() requestType: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) source: Record<string, unknown>;
  @ApiProperty({ type: [SyncChangeDocDto] }) changes: unknown[];
  @ApiProperty({ enum: SYNC_REQUEST_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The document request on orderbook/{id} carrying the changes',
  })
  documentRequestId: string | null;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) productInfo: Record<
    string,
    unknown
  > | null;
  @ApiProperty({ nullable: true, type: String, description: "The note of the buyer's accept or reject (reviewNote or note of the decision)" })
  reviewNote: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
}

export class SyncRequestListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: SYNC_REQUEST_STATUSES })
  @IsOptional()
  @IsIn(SYNC_REQUEST_STATUSES)
  status?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() bindingId?: string;
}

export class SyncLogQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() bindingId?: string;
  @ApiPropertyOptional({ enum: SYNC_LOG_OUTCOMES }) @IsOptional() @IsIn(SYNC_LOG_OUTCOMES) outcome?: string;
}

export class SyncLogResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) orderBookId: string;
  @ApiProperty({ nullable: true, type: String }) bindingId: string | null;
  @ApiProperty({ nullable: true, type: String }) connectionId: string | null;
  @ApiProperty({ nullable: true, type: String }) catalogId: string | null;
  @ApiProperty({ nullable: true, type: String }) catalogRevisionId: string | null;
  @ApiProperty({ nullable: true, type: 'integer' }) catalogRevisionVersion: number | null;
  @ApiProperty({ nullable: true, type: String }) eventType: string | null;
  @ApiProperty({ nullable: true, type: String }) sourceRowId: string | null;
  @ApiProperty({ nullable: true, type: String }) targetRowId: string | null;
  @ApiProperty({ enum: SYNC_LOG_OUTCOMES }) outcome: string;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  @ApiProperty({ nullable: true, type: String }) syncRequestId: string | null;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) details: Record<
    string,
    unknown
  > | null;
  @ApiProperty() createdAt: string;
}
