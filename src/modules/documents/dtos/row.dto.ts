import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsOptional, IsString, Min } from 'class-validator';
import type { Value } from '../fields/field.types.js';
import { REQUEST_STATUSES, type RequestStatus } from '../domain/document.records.js';
import { ReadOnlyEcho, PresentNotNull } from '../../../common/http/validation-decorators.js';
import { Int64Body } from '../../../common/http/pagination.js';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

const VALUE_SCHEMA = {
  description:
    'One typed key: text, number, boolean, date, selectOption, multiSelect, user, duration, rating, attachments, collaborators, relation; list or json for lookup and formula values (see docs/values.md)',
  example: { text: 'hello' },
};

export class ValueEntryDto {
  @ApiProperty() fieldId: string;
  @ApiProperty({ ...VALUE_SCHEMA, type: Object }) value: Value;
}

export class RowResponseDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: [ValueEntryDto] }) values: ValueEntryDto[];
  @ApiProperty({ type: 'integer', description: 'Optimistic-lock counter; every applied change increments it' }) version: number;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) createdBy: string | null;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) updatedBy: string | null;
}

export const READ_ONLY_DESCRIPTION =
  'True when the document is served read-only through an active data-source reference of the workspace (spec 2.3): the rows are the source workspace\'s and every write is refused';

/** `GET /data/{rowId}`: a row as read, marked read-only when served through a data-source reference. */
export class RowReadResponseDto extends RowResponseDto {
  @ApiProperty({ description: READ_ONLY_DESCRIPTION }) readOnly: boolean;
}

/** What a write did: the request it went to and, when merged at once, the revision it produced. */
export class WriteResultDto {
  @ApiProperty({ nullable: true, type: String, description: 'The request the change was recorded on' }) requestId: string | null;
  @ApiProperty({ enum: REQUEST_STATUSES, nullable: true }) requestStatus: RequestStatus | null;
  @ApiProperty({ nullable: true, type: String, description: 'Set when the change was merged' }) revisionId: string | null;
  @ApiProperty({ description: 'True when the change was applied to the document' }) merged: boolean;
  @ApiProperty({ description: 'True when the write waits in an open request because the workflow requires approval' }) pendingApproval: boolean;
}

export class RowWriteResponseDto extends RowResponseDto {
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
}

export class RowDeleteResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() deleted: boolean;
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
}

const VALUES_DESCRIPTION = 'Array of {fieldId, value}, or an object of field id to value; lenient inputs accepted (docs/values.md)';

export class CreateRowDto {
  @ApiPropertyOptional({ description: 'Row id; generated when absent' }) @IsOptional() @IsString() id?: string;
  @ApiPropertyOptional({ type: [ValueEntryDto], description: VALUES_DESCRIPTION }) @IsOptional() @Allow() values?: unknown;
}

export class UpdateRowDto {
  @ApiProperty({ type: [ValueEntryDto], description: `${VALUES_DESCRIPTION}; only the given fields change, null clears one` })
  @Allow()
  values: unknown;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Optimistic lock: 409 VERSION_CONFLICT when it is not the current version. int64: a number, or its decimal string as proto3 JSON writes it' })
  @PresentNotNull()
  @Int64Body()
  @IsInt()
  @Min(0)
  version?: number;

  // The other keys of a Row as GET answers it: accepted and ignored, so a row read can be sent back with new
  // values (as PUT /properties accepts DocumentProperties). `id` must name the row of the path.
  @ApiPropertyOptional({ readOnly: true, description: 'Read-only; when given it must be the rowId of the path (VALIDATION_ERROR otherwise)' })
  @IsOptional()
  @Allow()
  id?: unknown;

  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
  @ReadOnlyEcho() readOnly?: unknown;
}

export class BulkResultDto extends WriteResultDto {
  @ApiProperty({ type: 'integer' }) rowsUpdated: number;
  @ApiProperty({ type: [String] }) rowIds: string[];
  @ApiProperty() propertiesUpdated: boolean;
}

export class GroupAggregateDto {
  @ApiProperty({ enum: ['count', 'sum', 'avg', 'min', 'max'] }) kind: string;
  @ApiPropertyOptional() field?: string;
  @ApiProperty({ ...ANY_JSON_SCHEMA, nullable: true, description: 'Number, or the value as stored for min/max of text and dates' }) value: unknown;
}

export class GroupResultDto {
  @ApiProperty({ type: [ValueEntryDto], description: 'The group key: one entry per groupBy field (empty values are left out)' })
  keys: ValueEntryDto[];
  @ApiProperty({ type: [GroupAggregateDto] }) aggregations: GroupAggregateDto[];
}

/** A page of groups: `page`/`pageSize` of the query, `total` groups in all. */
export class GroupedQueryResultDto {
  @ApiProperty({ type: [GroupResultDto], description: 'Ordered by the stored group keys, empty keys last' }) groups: GroupResultDto[];
  @ApiProperty({ type: 'integer', example: 1 }) page: number;
  @ApiProperty({ type: 'integer', example: 20 }) pageSize: number;
  @ApiProperty({ type: 'integer', description: 'Number of groups' }) total: number;
  @ApiProperty({ type: 'integer' }) totalPages: number;
  @ApiProperty({ description: READ_ONLY_DESCRIPTION }) readOnly: boolean;
}
