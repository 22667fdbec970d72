import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsObject, IsOptional, IsString, IsUUID, Matches, MaxLength, ValidateNested } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { RELATION_DIRECTIONS, type RelationDirection } from '../domain/document.records.js';
import { DeprecatedApplyParam } from '../../../common/http/validation-decorators.js';
import { WriteResultDto } from './row.dto.js';

export const RELATION_TYPE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** One end of a relation: a row of a document; `workspaceId`/`organizationId` name its tenant like a /doc call's context. */
export class RelationEndDto {
  @ApiProperty({ maxLength: 64 }) @IsString() @MaxLength(64) docType: string;
  @ApiProperty({ maxLength: 128 }) @IsString() @MaxLength(128) docId: string;
  @ApiProperty({ maxLength: 128 }) @IsString() @MaxLength(128) rowId: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The workspace of this end (default: the call\'s workspaceId / X-Workspace-Id)' })
  @IsOptional()
  @IsUUID()
  workspaceId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'For an organization-level document: its organization' })
  @IsOptional()
  @IsUUID()
  organizationId?: string;
}

export class CreateRelationDto {
  @ApiProperty({ example: 'supplies', description: 'Kind of link, ^[A-Za-z0-9_.:-]{1,64}$', pattern: RELATION_TYPE_PATTERN.source })
  @IsString()
  @Matches(RELATION_TYPE_PATTERN)
  type: string;

  @ApiPropertyOptional({ enum: RELATION_DIRECTIONS, default: 'outgoing', description: 'bidirectional edges are listed as outgoing from both ends' })
  @IsOptional()
  @IsIn(RELATION_DIRECTIONS)
  direction?: RelationDirection;

  @ApiProperty({ type: RelationEndDto, description: 'Needs write permission on its document' })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => RelationEndDto)
  source: RelationEndDto;

  @ApiProperty({ type: RelationEndDto, description: 'Needs read permission; same organization as the source' })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => RelationEndDto)
  target: RelationEndDto;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class CreateRelationQueryDto {
  @ApiPropertyOptional({ description: 'Record the edge on this open request of the source document instead of merging at once', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  requestId?: string;

  @DeprecatedApplyParam('write directly (a workflow that requires approval still holds the write for it)')
  apply?: boolean;

  @IsOptional() @IsUUID() workspaceId?: string;
  @IsOptional() @IsUUID() organizationId?: string;
}

export class ListRelationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['outgoing', 'incoming'], default: 'outgoing' })
  @IsOptional()
  @IsIn(['outgoing', 'incoming'])
  direction?: 'outgoing' | 'incoming';

  @ApiPropertyOptional({ maxLength: 64 }) @IsOptional() @IsString() @MaxLength(64) type?: string;
  @ApiPropertyOptional({ description: "This document's end of the edge", maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) rowId?: string;

  @IsOptional() @IsUUID() workspaceId?: string;
  @IsOptional() @IsUUID() organizationId?: string;
}

export class RelationEndResponseDto {
  @ApiProperty() docType: string;
  @ApiProperty() docId: string;
  @ApiProperty({ type: String, nullable: true }) workspaceId: string | null;
  @ApiProperty() rowId: string;
}

export class RelationResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() type: string;
  @ApiProperty({ enum: RELATION_DIRECTIONS }) direction: RelationDirection;
  @ApiProperty({ type: RelationEndResponseDto }) source: RelationEndResponseDto;
  @ApiProperty({ type: RelationEndResponseDto }) target: RelationEndResponseDto;
  @ApiProperty({ type: String, nullable: true, description: 'Set when the edge is a value of this relation field of the source row' }) fieldId: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true, description: 'Null while the edge waits in an open request' }) createdAt: string | null;
  @ApiProperty() createdBy: string;
}

export class RelationWriteResponseDto extends RelationResponseDto {
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
}
