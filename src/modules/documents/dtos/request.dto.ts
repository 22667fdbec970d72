import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { Allow, ArrayMaxSize, IsArray, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { ANSWERED_TARGET_KINDS, CHANGE_OPERATIONS, CHANGE_TYPES, REQUEST_STATUSES, REVISION_OPERATION_TYPES, type RequestStatus } from '../domain/document.records.js';
import { CONFLICT_TYPES } from '../domain/merge.types.js';
import { Trimmed } from '../../../common/http/validation-decorators.js';
import { ConversionReportDto } from './document.dto.js';
import { RevisionResponseDto } from './revision.dto.js';
import { RowResponseDto } from './row.dto.js';

export class ChangeDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: CHANGE_TYPES }) type: string;
  @ApiProperty({ enum: CHANGE_OPERATIONS }) operation: string;
  @ApiProperty() targetId: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Validated values (as ValueEntry arrays) and the base version' })
  data: Record<string, unknown>;
  @ApiProperty() changedAt: string;
  @ApiProperty() changedBy: string;
}

export class RequestResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() docType: string;
  @ApiProperty() docId: string;
  @ApiProperty() title: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: REQUEST_STATUSES }) status: RequestStatus;
  @ApiProperty() author: string;
  @ApiProperty({ type: [String] }) reviewers: string[];
  @ApiProperty({ type: [String] }) contributors: string[];
  @ApiProperty({
    type: [ChangeDto],
    description: 'The changes in recording order: the first 1000 of one request, the first 100 of each list item (changeCount is the total)',
  })
  changes: ChangeDto[];
  @ApiProperty({ type: 'integer' }) changeCount: number;
  @ApiProperty({ nullable: true, type: String }) generatedRevisionId: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) mergedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) mergedBy: string | null;
}

export class MergeResponseDto extends RequestResponseDto {
  @ApiProperty({ type: RevisionResponseDto }) revision: RevisionResponseDto;
  @ApiProperty({ type: [ConversionReportDto] }) conversions: ConversionReportDto[];
}

export class ChangeTargetInputDto {
  @ApiProperty({ enum: ANSWERED_TARGET_KINDS })
  @IsIn(ANSWERED_TARGET_KINDS)
  kind: string;
  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) rowId?: string;
  @ApiPropertyOptional({
    maxLength: 64,
    description: 'The field (field-*), the property (property-update: one Value; property-delete: only that property is cleared) or the cell (row-*: one Value)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  fieldId?: string;
}

/**
 * Change types a request body may carry (spec 2.9): the ChangeOperation types but the relation ones (relation edges
 * are written through relation fields' values and POST /relations). `field-*` are recorded as a `metadata-update`.
 */
export const CHANGE_INPUT_TYPES = REVISION_OPERATION_TYPES.filter((type) => !type.startsWith('relation-'));

export class ChangeInputDto {
  @ApiProperty({ enum: CHANGE_INPUT_TYPES })
  @IsIn(CHANGE_INPUT_TYPES)
  type: string;

  @ApiPropertyOptional({
    enum: CHANGE_OPERATIONS,
    description:
      'Optional, as a Change shows it (spec 2.9): create for row-create and field-create, delete for row-delete, field-delete and property-delete, create or update for property-update, update for the rest; another one is VALIDATION_ERROR',
  })
  @IsOptional()
  @IsIn(CHANGE_OPERATIONS)
  operation?: string;

  @ApiProperty({ type: ChangeTargetInputDto }) @ValidateNested() @Type(() => ChangeTargetInputDto) @IsObject() target: ChangeTargetInputDto;

  @ApiPropertyOptional({
    description:
      'row-create/row-update: a Row {id?, values: [{fieldId, value}], version?} (spec 2.6; createdAt, createdBy, updatedAt, updatedBy are read-only and ignored; ' +
      'id must equal target.rowId when both are given; version is checked on row-update like PUT /data/{rowId}), or the values alone (array of {fieldId, value} or object of field id to Value); ' +
      'with target.fieldId one Value. property-update: values, or one Value with target.fieldId. metadata-update: {fields, properties}. settings-update: settings. ' +
      'field-create: a Field (its id, or target.fieldId); field-update: the Field or the keys to change, target.fieldId naming it; field-delete: target.fieldId. ' +
      'Field changes are recorded as one metadata-update of the metadata the request builds on.',
    example: { id: 'row-1', values: [{ fieldId: 'name', value: { text: 'Widget' } }] },
  })
  @IsOptional()
  @Allow()
  newValue?: unknown;
}

/** The title of a request created without one. */
export const DEFAULT_REQUEST_TITLE = 'Untitled request';

export class CreateRequestDto {
  /** Spec 2.9 lists title, description and changes without marking any required; a request needs a name to show. */
  @ApiPropertyOptional({ description: `Default "${DEFAULT_REQUEST_TITLE}"; trimmed, and one made only of whitespace is refused`, maxLength: 500, minLength: 1 })
  @IsOptional()
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  title?: string;
  @ApiPropertyOptional({ maxLength: 10_000 }) @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @ApiPropertyOptional({ type: [String], description: 'User ids asked to review', maxItems: 100 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  reviewers?: string[];
  @ApiPropertyOptional({ type: [ChangeInputDto], maxItems: 1000 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => ChangeInputDto)
  changes?: ChangeInputDto[];
}

export class UpdatedCellDto {
  @ApiProperty() rowId: string;
  @ApiProperty() fieldId: string;
  @ApiProperty({ nullable: true, description: 'Value before (null when empty)' }) oldValue: unknown;
  @ApiProperty({ nullable: true, description: 'Value after (null when cleared)' }) newValue: unknown;
}

export class ChangedPropertyDto {
  @ApiProperty() fieldId: string;
  @ApiProperty({ nullable: true }) oldValue: unknown;
  @ApiProperty({ nullable: true }) newValue: unknown;
}

export class FieldChangesDto {
  @ApiProperty({ type: [String] }) created: string[];
  @ApiProperty({ type: [String] }) updated: string[];
  @ApiProperty({ type: [String] }) deleted: string[];
}

export class RequestDiffDto {
  @ApiProperty({ type: [RowResponseDto] }) addedRows: RowResponseDto[];
  @ApiProperty({ type: [UpdatedCellDto] }) updatedCells: UpdatedCellDto[];
  @ApiProperty({ type: [RowResponseDto], description: 'Rows the request deletes, as they are now' }) deletedRows: RowResponseDto[];
  @ApiProperty({ type: [ChangedPropertyDto] }) changedProperties: ChangedPropertyDto[];
  @ApiProperty({ type: FieldChangesDto, nullable: true }) fields: FieldChangesDto | null;
  @ApiProperty() settingsChanged: boolean;
}

export class ConflictDto {
  @ApiProperty({ enum: CONFLICT_TYPES }) type: string;
  @ApiProperty() targetId: string;
  @ApiPropertyOptional() rowId?: string;
  @ApiPropertyOptional() fieldId?: string;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) baseVersion?: number | null;
  @ApiPropertyOptional({ type: 'integer' }) currentVersion?: number;
  @ApiPropertyOptional() value?: unknown;
  @ApiProperty() reason: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description:
      '`invalid-value`: the values that no longer fit (as in VALIDATION_ERROR details); `field-read-elsewhere`: the lookups and rollups of other documents reading the field (`dependents`, as `docType/docId:fieldId`)',
  })
  details?: Record<string, unknown>[];
}

export class ConflictsResponseDto {
  @ApiProperty() mergeable: boolean;
  @ApiProperty({ type: [ConflictDto] }) conflicts: ConflictDto[];
}
