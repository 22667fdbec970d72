import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { FixedEcho, PresentNotNull, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import { LookupDto, RollupDto, ValidationRuleDto } from '../../documents/dtos/document.dto.js';
import { FIELD_TYPES } from '../../documents/fields/field.types.js';
import { ScFieldDto } from './common.dto.js';

export class SelectOptionInputDto {
  @ApiPropertyOptional({ description: 'Generated from the label when absent', maxLength: 255 })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  id?: string;
  @ApiProperty({ minLength: 1, maxLength: 255 }) @IsString() @MinLength(1) @MaxLength(255) label: string;
  @ApiPropertyOptional({ maxLength: 64 }) @IsOptional() @IsString() @MaxLength(64) color?: string;
}

export class FieldInputDto {
  @ApiPropertyOptional({
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    description: 'Generated from the name when absent',
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  id?: string;
  @ApiProperty({ minLength: 1, maxLength: 255 }) @IsString() @MinLength(1) @MaxLength(255) name: string;
  @ApiProperty({ enum: FIELD_TYPES }) @IsIn(FIELD_TYPES) type: string;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() required?: boolean;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ type: [SelectOptionInputDto], maxItems: 1000 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => SelectOptionInputDto)
  selectOptions?: SelectOptionInputDto[];
  // The rest of the document field definition (`PUT /doc/{docType}/{docId}/metadata`), passed to the documents
  // module and checked there (docs/documents.md, docs/formulas.md); its errors name `fields[i].…` as sent. Documented
  // with the types that check accepts (as FieldDto): a client generated from `{type: object}` sent `unique: {}`.
  @ApiPropertyOptional({ type: 'boolean' }) @Allow() unique?: unknown;
  @ApiPropertyOptional({ ...ANY_JSON_SCHEMA, description: 'A Value (or lenient form) applied on create' })
  @Allow()
  defaultValue?: unknown;
  @ApiPropertyOptional({ type: [ValidationRuleDto], description: 'Validation rules, as in document metadata' })
  @Allow()
  validations?: unknown;
  @ApiPropertyOptional({
    type: 'string',
    description: 'formula fields: the formula (docs/formulas.md)',
    example: '{price} * 2',
  })
  @Allow()
  formula?: unknown;
  @ApiPropertyOptional({ type: LookupDto, description: 'lookup fields: {relationFieldId, targetFieldId}' })
  @Allow()
  lookup?: unknown;
  @ApiPropertyOptional({ type: RollupDto, description: 'rollup fields: {relationFieldId, targetFieldId, agg}' })
  @Allow()
  rollup?: unknown;
}

export class CreateCatalogDto {
  @ApiProperty({ minLength: 1, maxLength: 255 })
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;
  @ApiPropertyOptional({ maxLength: 10_000 })
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  description?: string;
  @ApiProperty({
    description: 'A string; product and supplier appear in the spec',
    example: 'product',
    minLength: 1,
    maxLength: 64,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  catalogType: string;
  @ApiPropertyOptional({
    default: true,
    description: 'false: no new connections; existing ones keep their state',
  })
  @IsOptional()
  @IsBoolean()
  sharingEnabled?: boolean;
  @ApiPropertyOptional({ type: [FieldInputDto], maxItems: 500 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => FieldInputDto)
  fields?: FieldInputDto[];
}

/**
 * PATCH: `name`, `description`, `catalogType`, `sharingEnabled`. The body may be the catalog as read: `id` must then
 * be the id in the path, `docType` `catalog` and `fields` the catalog's fields as they are (fields change through
 * the document metadata, `PUT /doc/catalog/{id}/metadata`); the other read-only keys are ignored.
 */
export class UpdateCatalogDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 })
  @PresentNotNull()
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10_000 })
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  description?: string | null;
  // Not nullable: null used to be ignored with a 200, so a client sending it believed it had changed something.
  @ApiPropertyOptional({ minLength: 1, maxLength: 64 })
  @PresentNotNull()
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  catalogType?: string;
  @ApiPropertyOptional() @PresentNotNull() @IsBoolean() sharingEnabled?: boolean;

  @FixedEcho({ type: String, format: 'uuid', description: "The catalog's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, example: 'catalog', description: 'When given it must be `catalog`' })
  docType?: unknown;

  @ApiPropertyOptional({
    type: [ScFieldDto],
    description:
      "The catalog's fields as read; when given they must be the current ones (PATCH does not change fields: " +
      'PUT /doc/catalog/{id}/metadata does)',
  })
  @IsOptional()
  @Allow()
  fields?: unknown;

  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() workspaceId?: unknown;
  @ReadOnlyEcho() rowCount?: unknown;
  @ReadOnlyEcho() version?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class CatalogResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Also the document id: /doc/catalog/{id}?organizationId=…' })
  id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ nullable: true, type: String, description: 'Always null (organization-level)' })
  workspaceId: null;
  @ApiProperty({ example: 'catalog' }) docType: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty() catalogType: string;
  @ApiProperty() sharingEnabled: boolean;
  @ApiProperty({ type: [ScFieldDto] }) fields: ScFieldDto[];
  @ApiProperty({ type: 'integer' }) rowCount: number;
  @ApiProperty({ type: 'integer', description: 'Latest revision number' }) version: number;
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class CatalogRowUpdateDto {
  @ApiProperty({
    description: 'Array of {fieldId, value} or object of field id to Value; null clears',
    example: [{ fieldId: 'price', value: { number: 12 } }],
  })
  @Allow()
  values: unknown;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Optimistic lock: VERSION_CONFLICT (409) when the row moved on',
  })
  @PresentNotNull()
  @IsInt()
  @Min(0)
  version?: number;
}

export class BatchRowTargetDto {
  @ApiPropertyOptional({ description: 'The row to update; absent → a new row is created (id generated)' })
  row?: string;
}

export class BatchRowDto {
  @ApiPropertyOptional({ type: BatchRowTargetDto }) target?: BatchRowTargetDto;
  @ApiPropertyOptional({ description: 'Shorthand for target.row' }) id?: string;
  @ApiProperty({
    oneOf: [{ type: 'array', items: { type: 'object', properties: { fieldId: { type: 'string' }, value: {} } } }, { type: 'object' }],
    description: 'ValueEntry array or object of field id to Value',
    example: [{ fieldId: 'price', value: { number: 12 } }],
  })
  values: unknown;
  @ApiPropertyOptional({ description: 'Free object, kept on nothing (accepted for the order-book form)' })
  metadata?: unknown;
  @ApiPropertyOptional({
    enum: ['create', 'update', 'delete'],
    description: 'Default: update with a target row, create without',
  })
  operation?: string;
}

/** `{rows: [{target{row}, values[], metadata}]}` (spec 4.4, the order-book form); at most 1000 rows, all or nothing. */
export class BatchUpdateDto {
  @ApiProperty({ type: [BatchRowDto], minItems: 1, maxItems: 1000, description: 'One to 1000 rows (an empty list is VALIDATION_ERROR)' })
  @IsArray()
  @ArrayMaxSize(1000)
  @Allow()
  rows: unknown[];
}

export class BatchUpdateResultDto {
  @ApiProperty({ format: 'uuid', description: 'The request carrying the changes' }) requestId: string;
  @ApiProperty({ description: 'Merged at once (no requestId given and no approval workflow)' })
  merged: boolean;
  @ApiProperty({ nullable: true, type: String }) revisionId: string | null;
  @ApiProperty({ type: 'integer' }) rowsCreated: number;
  @ApiProperty({ type: 'integer' }) rowsUpdated: number;
  @ApiProperty({ type: 'integer' }) rowsDeleted: number;
  @ApiProperty({ type: [String] }) rowIds: string[];
}
