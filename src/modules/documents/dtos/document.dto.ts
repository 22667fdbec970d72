import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsObject, IsOptional, IsString, IsUUID, MaxLength, Min } from 'class-validator';
import { FIELD_TYPES, type FieldType } from '../fields/field.types.js';
import { COUNT_MODES, type CountMode } from '../query/count-mode.js';
import { RevisionResponseDto } from './revision.dto.js';
import { READ_ONLY_DESCRIPTION, RowResponseDto, WriteResultDto } from './row.dto.js';
import { CLIENT_ID_PATTERN } from '../../../common/http/client-ids.js';
import { PresentNotNull } from '../../../common/http/validation-decorators.js';
import { Int64Body } from '../../../common/http/pagination.js';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

export class SelectOptionDto {
  @ApiProperty() id: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Language code to name' })
  name?: Record<string, string>;
  @ApiPropertyOptional() label?: string;
  @ApiPropertyOptional() color?: string;
}

export class ValidationRuleDto {
  @ApiProperty({ enum: ['pattern', 'min', 'max', 'minLength', 'maxLength', 'enum', 'custom'] }) ruleType: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { pattern: '^[A-Z]+$' },
    description:
      'Keyed by the rule: pattern {pattern, flags?}; min/max {value} or {min}/{max}; minLength/maxLength {value} or ' +
      '{minLength}/{maxLength}; enum {values} or {enum}; custom: free (stored, not evaluated)',
  })
  config?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) message?: Record<string, string>;
}

export class LookupDto {
  @ApiProperty() relationFieldId: string;
  @ApiProperty() targetFieldId: string;
}

export class RollupDto extends LookupDto {
  @ApiProperty({ enum: ['sum', 'avg', 'min', 'max', 'count'] }) agg: string;
}

/** `Document.Field` (spec 2.5). */
export class FieldDto {
  @ApiProperty({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: FIELD_TYPES }) type: FieldType;
  @ApiPropertyOptional() required?: boolean;
  @ApiPropertyOptional() unique?: boolean;
  @ApiPropertyOptional({ ...ANY_JSON_SCHEMA, nullable: true, description: 'A Value (or lenient form, as given) applied on create; null when none' })
  defaultValue?: unknown;
  @ApiPropertyOptional({ type: [SelectOptionDto] }) selectOptions?: SelectOptionDto[];
  @ApiPropertyOptional({ type: [ValidationRuleDto] }) validations?: ValidationRuleDto[];
  @ApiPropertyOptional() formula?: string;
  @ApiPropertyOptional({ type: LookupDto }) lookup?: LookupDto;
  @ApiPropertyOptional({ type: RollupDto }) rollup?: RollupDto;
  @ApiPropertyOptional({ enum: ['number', 'text', 'boolean', 'date'], readOnly: true, description: 'formula: the inferred result type (set by the server)' })
  resultType?: 'number' | 'text' | 'boolean' | 'date';
}

export class MetadataResponseDto {
  @ApiProperty({ type: [FieldDto] }) fields: FieldDto[];
  @ApiProperty({ type: [FieldDto] }) properties: FieldDto[];
  @ApiProperty({ type: 'integer', description: 'Incremented by every merged metadata change' }) version: number;
}

export class ConversionReportDto {
  @ApiProperty() fieldId: string;
  @ApiProperty({ enum: ['fields', 'properties'] }) scope: string;
  @ApiProperty() fromType: string;
  @ApiProperty() toType: string;
  @ApiProperty({ type: 'integer' }) converted: number;
  @ApiProperty({ type: 'integer', description: 'Values that could not be converted; removed and kept in the revision' }) failed: number;
  @ApiProperty({ type: [String], description: 'Up to 50 rows whose value could not be converted' }) failedRowIds: string[];
}

export class MetadataWriteResponseDto extends MetadataResponseDto {
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
  @ApiProperty({ type: [ConversionReportDto] }) conversions: ConversionReportDto[];
}

export class UpdateMetadataDto {
  @ApiProperty({ type: [FieldDto], description: 'Required: the complete list of data fields' }) @Allow() fields: unknown;
  @ApiPropertyOptional({ type: [FieldDto], description: 'Document-property fields; kept when omitted' }) @IsOptional() @Allow() properties?: unknown;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Optimistic lock: the `version` of the metadata as read (GET /metadata, with the same requestId); 409 VERSION_CONFLICT when it is no longer current; a number, or its decimal string (as the row version). With requestId, the committed version re-bases metadata in conflict (docs/documents.md)',
  })
  @PresentNotNull()
  @Int64Body()
  @IsInt()
  @Min(0)
  version?: number;
}

export class DocumentResponseDto {
  @ApiProperty({ description: 'The document id (docId)' }) id: string;
  @ApiProperty() docType: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'Null for organization-level documents (catalogs, order books)' })
  workspaceId: string | null;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  @ApiProperty({ type: 'integer', description: 'Latest revision number' }) version: number;
  @ApiProperty({ type: 'integer' }) rowCount: number;
  @ApiProperty({ description: 'Served read-only through a data-source reference' }) readOnly: boolean;
  @ApiProperty() createdAt: string;
  @ApiProperty() createdBy: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) updatedBy: string | null;
}

export class CreateDocumentDto {
  @ApiPropertyOptional({ pattern: CLIENT_ID_PATTERN.source, description: 'Generated when absent; not . or ..', maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) id?: string;
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "Omitted: the organization context (organizationId query parameter or X-Organization-Id header), else the workspace's organization. " +
      'Neither a workspace nor an organization named (body or context): the caller\'s default workspace (GET /users/me defaultWorkspaceId).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;
  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description:
      'The workspace the document belongs to. Null creates an organization-level document (workspace-less, like catalogs and order books). ' +
      'Omitted: the workspace context of the call (workspaceId query parameter or X-Workspace-Id header) if given; otherwise organization-level when an ' +
      "organization is named (organizationId in the body or the organization context), else the caller's default workspace.",
  })
  @IsOptional()
  @IsUUID()
  workspaceId?: string | null;
  @ApiPropertyOptional({ maxLength: 500 }) @IsOptional() @IsString() @MaxLength(500) title?: string;
  @ApiPropertyOptional({ type: UpdateMetadataDto }) @IsOptional() @IsObject() metadata?: { fields?: unknown; properties?: unknown };
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Document settings (spec 2.11)' })
  @IsOptional()
  @IsObject()
  settings?: Record<string, unknown>;
}

export class SettingsDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() permissions?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() notifications?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { requiresApproval: true, approvers: [], autoMerge: false } })
  @IsOptional()
  @IsObject()
  workflow?: Record<string, unknown>;
}

export class SettingsResponseDto extends SettingsDto {}

export class SettingsWriteResponseDto extends SettingsDto {
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
}

export class RowPageDto {
  @ApiProperty({ type: [RowResponseDto] }) items: RowResponseDto[];
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Null with count=none; an estimate when totalExact is false' }) total: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) totalPages: number | null;
  @ApiProperty({ description: 'True when total is an exact count' }) totalExact: boolean;
  @ApiProperty({ enum: COUNT_MODES }) countMode: CountMode;
  @ApiProperty({ description: READ_ONLY_DESCRIPTION }) readOnly: boolean;
}

/** A keyset page of rows (`cursor`/`limit` given): no count, `nextCursor` null on the last page. */
export class RowCursorPageDto {
  @ApiProperty({ type: [RowResponseDto] }) items: RowResponseDto[];
  @ApiProperty({ type: 'integer' }) limit: number;
  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' }) nextCursor: string | null;
  @ApiProperty({ description: READ_ONLY_DESCRIPTION }) readOnly: boolean;
}

/** `GET /doc/{docType}/{docId}`: the sections named in `include`. */
export class DocumentBundleDto {
  @ApiProperty({ type: DocumentResponseDto }) document: DocumentResponseDto;
  @ApiPropertyOptional({ type: MetadataResponseDto }) metadata?: MetadataResponseDto;
  // By name: the views and comments modules build on this one, so their DTO classes cannot be imported here.
  @ApiPropertyOptional({ type: 'array', items: { $ref: '#/components/schemas/ViewResponseDto' }, description: "The document's views, default first" }) views?: unknown[];
  @ApiPropertyOptional({ type: RowPageDto }) data?: RowPageDto;
  @ApiPropertyOptional({ type: 'array', items: { $ref: '#/components/schemas/CommentResponseDto' }, description: 'The newest commentsLimit comments (empty while the comments module is not registered)' }) comments?: unknown[];
  @ApiPropertyOptional({ type: [RevisionResponseDto] }) revisions?: RevisionResponseDto[];
  @ApiPropertyOptional({ type: SettingsResponseDto }) settings?: SettingsResponseDto;
}
