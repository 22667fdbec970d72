import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../entities/workspace-member.entity.js';
import { WORKSPACE_VISIBILITIES, type WorkspaceEntity, type WorkspaceVisibility } from '../entities/workspace.entity.js';
import type { WorkspaceAccess } from '../services/workspace-access.service.js';
import { DataSourceReferenceResponseDto, WorkspaceDataSourceReferenceItemDto } from './data-source-reference.dto.js';
import { SLUG_PATTERN } from './organization.dto.js';
import { FixedEcho, PresentNotNull, QueryBoolean, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import { iso, isoRequired } from './tenancy-common.dto.js';

/** The most data-source references one write may list. */
const MAX_DATA_SOURCE_REFERENCES = 100;

const refsDoc: ApiPropertyOptions = {
  type: [WorkspaceDataSourceReferenceItemDto],
  maxItems: MAX_DATA_SOURCE_REFERENCES,
  description:
    'The complete set of data-source references of this workspace: listed pairs (sourceWorkspaceId, docType) are ' +
    'created or have their status set, references not listed are removed. Items may be the records as read ' +
    '(a listed pair keeps its reference and id; read-only keys are ignored).',
};

export class CreateWorkspaceDto {
  @ApiProperty({ maxLength: 100, description: 'Trimmed; blank is refused', minLength: 1 }) @Trimmed() @IsString() @MinLength(1) @MaxLength(100) name: string;
  @ApiProperty({ description: 'Unique inside the organization; lower-case letters, digits and hyphens', example: 'sales', pattern: SLUG_PATTERN.source })
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must be lower-case letters, digits and hyphens, 1-64 characters' })
  slug: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ maxLength: 100 }) @IsOptional() @IsString() @MaxLength(100) icon?: string;
  @ApiPropertyOptional({ maxLength: 32 }) @IsOptional() @IsString() @MaxLength(32) color?: string;
  @ApiPropertyOptional({ enum: WORKSPACE_VISIBILITIES, default: 'private' }) @IsOptional() @IsIn(WORKSPACE_VISIBILITIES) visibility?: WorkspaceVisibility;
  @ApiPropertyOptional(refsDoc)
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_DATA_SOURCE_REFERENCES)
  @ValidateNested({ each: true })
  @Type(() => WorkspaceDataSourceReferenceItemDto)
  dataSourceReferences?: WorkspaceDataSourceReferenceItemDto[];
}

/**
 * PATCH: the given keys change, omitted ones are kept. The body may be the workspace as read: `id` and `slug` must
 * then be this workspace's (the slug is fixed), and the other read-only keys are ignored.
 */
export class UpdateWorkspaceDto {
  @ApiPropertyOptional({ maxLength: 100, description: 'Trimmed; blank is refused', minLength: 1 }) @PresentNotNull() @Trimmed() @IsString() @MinLength(1) @MaxLength(100) name?: string;
  @ApiPropertyOptional({ maxLength: 2000, nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  @ApiPropertyOptional({ maxLength: 100, nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(100) icon?: string | null;
  @ApiPropertyOptional({ maxLength: 32, nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(32) color?: string | null;
  @ApiPropertyOptional({ enum: WORKSPACE_VISIBILITIES }) @PresentNotNull() @IsIn(WORKSPACE_VISIBILITIES) visibility?: WorkspaceVisibility;
  @ApiPropertyOptional(refsDoc)
  @PresentNotNull()
  @IsArray()
  @ArrayMaxSize(MAX_DATA_SOURCE_REFERENCES)
  @ValidateNested({ each: true })
  @Type(() => WorkspaceDataSourceReferenceItemDto)
  dataSourceReferences?: WorkspaceDataSourceReferenceItemDto[];

  @FixedEcho({ type: String, format: 'uuid', description: "The workspace's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, description: "The workspace's slug; when given it must be the current one (the slug is fixed)" })
  slug?: unknown;

  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() isDefault?: unknown;
  @ReadOnlyEcho() archived?: unknown;
  @ReadOnlyEcho() archivedAt?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() role?: unknown;
  @ReadOnlyEcho() permissions?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class WorkspaceQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: WORKSPACE_VISIBILITIES }) @IsOptional() @IsIn(WORKSPACE_VISIBILITIES) visibility?: WorkspaceVisibility;
  @ApiPropertyOptional({ type: Boolean, default: false }) @IsOptional() @QueryBoolean() @IsBoolean() includeArchived?: boolean;
}

export class WorkspacePermissionsDto {
  @ApiProperty() read: boolean;
  @ApiProperty({ description: 'Create, edit and delete documents' }) write: boolean;
  @ApiProperty({ description: 'Settings, members, data-source references' }) manage: boolean;
  @ApiProperty() archive: boolean;
  @ApiProperty() delete: boolean;
}

export class WorkspaceResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String }) icon: string | null;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  @ApiProperty({ enum: WORKSPACE_VISIBILITIES }) visibility: WorkspaceVisibility;
  @ApiProperty({ description: 'The workspace created with the organization' }) isDefault: boolean;
  @ApiProperty() archived: boolean;
  @ApiProperty({ nullable: true, type: String }) archivedAt: string | null;
  @ApiProperty({ format: 'uuid' }) createdBy: string;
  @ApiProperty({ enum: WORKSPACE_ROLES, nullable: true, description: "The caller's workspace role (null: access through the organization role or visibility)" })
  role: WorkspaceRole | null;
  @ApiProperty({ type: WorkspacePermissionsDto, description: 'What the caller may do here' }) permissions: WorkspacePermissionsDto;
  @ApiProperty({ type: [DataSourceReferenceResponseDto] }) dataSourceReferences: DataSourceReferenceResponseDto[];
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(ws: WorkspaceEntity, access: WorkspaceAccess, refs: DataSourceReferenceResponseDto[]): WorkspaceResponseDto {
    return {
      id: ws.id,
      organizationId: ws.organizationId,
      name: ws.name,
      slug: ws.slug,
      description: ws.description,
      icon: ws.icon,
      color: ws.color,
      visibility: ws.visibility,
      isDefault: ws.isDefault,
      archived: ws.archivedAt !== null,
      archivedAt: iso(ws.archivedAt),
      createdBy: ws.createdBy,
      role: access.workspaceRole,
      permissions: {
        read: access.canRead,
        write: access.canWrite,
        manage: access.canManage,
        archive: access.canArchive,
        delete: access.canDelete,
      },
      dataSourceReferences: refs,
      createdAt: isoRequired(ws.createdAt),
      updatedAt: isoRequired(ws.updatedAt),
    };
  }
}
