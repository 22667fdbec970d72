import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { DATA_SOURCE_REFERENCE_STATUSES, type DataSourceReferenceStatus } from '../entities/data-source-reference.entity.js';
import type { DataSourceReferenceEntity } from '../entities/data-source-reference.entity.js';
import { isoRequired } from './tenancy-common.dto.js';

export const DOC_TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** One reference as written (create, and items of a workspace's `dataSourceReferences`). */
export class DataSourceReferenceInputDto {
  @ApiProperty({ format: 'uuid', description: 'A workspace of the same organization the caller may read' })
  @IsUUID()
  sourceWorkspaceId: string;

  @ApiProperty({ example: 'catalog', description: 'The document type whose data the source workspace serves' })
  @IsString()
  @Matches(DOC_TYPE_PATTERN, { message: 'docType must be a letter followed by up to 63 letters, digits, _ or -' })
  docType: string;

  @ApiPropertyOptional({ enum: DATA_SOURCE_REFERENCE_STATUSES, default: 'active' })
  @IsOptional()
  @IsIn(DATA_SOURCE_REFERENCE_STATUSES)
  status?: DataSourceReferenceStatus;
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

/** Pause (`inactive`) or enable (`active`). */
export class UpdateDataSourceReferenceDto {
  @ApiProperty({ enum: DATA_SOURCE_REFERENCE_STATUSES }) @IsIn(DATA_SOURCE_REFERENCE_STATUSES) status: DataSourceReferenceStatus;
}

export class DataSourceReferenceResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid', description: 'The workspace whose reads are replaced' }) workspaceId: string;
  @ApiProperty({ format: 'uuid' }) sourceWorkspaceId: string;
  @ApiProperty() docType: string;
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
      status: ref.status,
      createdBy: ref.createdBy,
      updatedBy: ref.updatedBy,
      createdAt: isoRequired(ref.createdAt),
      updatedAt: isoRequired(ref.updatedAt),
    };
  }
}
