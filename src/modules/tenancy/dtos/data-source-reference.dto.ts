import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Allow, IsBoolean, IsIn, IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { DOC_TYPE_PATTERN, DOC_TYPE_RULE } from '../../../common/http/client-ids.js';
import { FixedEcho, ReadOnlyEcho } from '../../../common/http/validation-decorators.js';
import { DATA_SOURCE_REFERENCE_STATUSES, type DataSourceReferenceStatus } from '../entities/data-source-reference.entity.js';
import type { DataSourceReferenceEntity } from '../entities/data-source-reference.entity.js';
import { isoRequired, LowerCaseUuid } from './tenancy-common.dto.js';

/**
 * The one kind of data-source reference (spec 2.3, 4.3: "replacement mode"): the source workspace's data replaces the
 * workspace's own for one document type. A body may name it; any other mode is VALIDATION_ERROR.
 */
export const DATA_SOURCE_REFERENCE_MODES = ['replacement'] as const;
export type DataSourceReferenceMode = (typeof DATA_SOURCE_REFERENCE_MODES)[number];
const MODE_DESCRIPTION =
  "Replacement mode (spec 2.3), the only mode: the source workspace's data of docType replaces the workspace's own";

/** One reference as written (create, and items of a workspace's `dataSourceReferences`). */
export class DataSourceReferenceInputDto {
  @ApiProperty({ format: 'uuid', description: 'A workspace of the same organization the caller may read' })
  @LowerCaseUuid()
  @IsUUID()
  sourceWorkspaceId: string;

  // The pattern of /doc/{docType}: every document type that can exist can be referenced.
  @ApiProperty({ example: 'catalog', description: `The document type whose data the source workspace serves; ${DOC_TYPE_RULE}`, pattern: DOC_TYPE_PATTERN.source })
  @IsString()
  @Matches(DOC_TYPE_PATTERN, { message: `docType ${DOC_TYPE_RULE}` })
  docType: string;

  @ApiPropertyOptional({ enum: DATA_SOURCE_REFERENCE_STATUSES, default: 'active' })
  @IsOptional()
  @IsIn(DATA_SOURCE_REFERENCE_STATUSES)
  status?: DataSourceReferenceStatus;

  @ApiPropertyOptional({ enum: DATA_SOURCE_REFERENCE_MODES, default: 'replacement', description: MODE_DESCRIPTION })
  @IsOptional()
  @IsIn(DATA_SOURCE_REFERENCE_MODES)
  mode?: DataSourceReferenceMode;
}

/** The keys a reference answers that a write body may carry back unchanged (accepted and ignored). */
class DataSourceReferenceReadOnlyKeys {
  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() workspaceId?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class CreateDataSourceReferenceDto extends DataSourceReferenceInputDto {
  @ApiPropertyOptional({
    default: false,
    description:
      'Organization owner/admin only: an active reference of the same document type on this workspace is paused ' +
      'instead of the create failing with ALREADY_EXISTS.',
  })
  @IsOptional()
  @IsBoolean()
  force?: boolean;
}

/**
 * An item of a workspace's `dataSourceReferences` (workspace create and PATCH): a reference as written, or as read
 * from the workspace record. The set is keyed by (sourceWorkspaceId, docType); `id` only confirms which reference
 * an item is (see DataSourceReferencesService.replaceAll), the other read-only keys are ignored.
 */
export class WorkspaceDataSourceReferenceItemDto extends IntersectionType(
  DataSourceReferenceInputDto,
  DataSourceReferenceReadOnlyKeys,
) {
  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    description:
      "The reference's id as read. When it names a reference of this workspace, sourceWorkspaceId and docType must be " +
      "that reference's (they cannot change); an id naming no reference of this workspace is ignored.",
  })
  @IsOptional()
  @Allow()
  id?: unknown;
}

/**
 * Pause (`inactive`) or enable (`active`). The body may be the reference as read: `id`, `sourceWorkspaceId` and
 * `docType` must then be this reference's (a reference never changes its source or type), the rest is ignored.
 */
export class UpdateDataSourceReferenceDto extends DataSourceReferenceReadOnlyKeys {
  @ApiProperty({ enum: DATA_SOURCE_REFERENCE_STATUSES }) @IsIn(DATA_SOURCE_REFERENCE_STATUSES) status: DataSourceReferenceStatus;

  @FixedEcho({ type: String, format: 'uuid', description: "The reference's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, format: 'uuid', description: "When given, must be the reference's own (cannot change)" })
  sourceWorkspaceId?: unknown;

  @FixedEcho({ type: String, description: "When given, must be the reference's own (cannot change)" })
  docType?: unknown;

  @ApiPropertyOptional({ enum: DATA_SOURCE_REFERENCE_MODES, description: MODE_DESCRIPTION })
  @IsOptional()
  @IsIn(DATA_SOURCE_REFERENCE_MODES)
  mode?: DataSourceReferenceMode;
}

export class DataSourceReferenceResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid', description: 'The workspace whose reads are replaced' }) workspaceId: string;
  @ApiProperty({ format: 'uuid' }) sourceWorkspaceId: string;
  @ApiProperty() docType: string;
  @ApiProperty({ enum: DATA_SOURCE_REFERENCE_MODES, description: MODE_DESCRIPTION }) mode: DataSourceReferenceMode;
  @ApiProperty({ enum: DATA_SOURCE_REFERENCE_STATUSES }) status: DataSourceReferenceStatus;
  @ApiProperty({ format: 'uuid' }) createdBy: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) updatedBy: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(ref: DataSourceReferenceEntity): DataSourceReferenceResponseDto {
    return {
      id: ref.id,
      organizationId: ref.organizationId,
      workspaceId: ref.workspaceId,
      sourceWorkspaceId: ref.sourceWorkspaceId,
      docType: ref.docType,
      mode: 'replacement',
      status: ref.status,
      createdBy: ref.createdBy,
      updatedBy: ref.updatedBy,
      createdAt: isoRequired(ref.createdAt),
      updatedAt: isoRequired(ref.updatedAt),
    };
  }
}
