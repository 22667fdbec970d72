import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, Matches, MaxLength, ValidateNested } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { UnversionedWriteQueryDto } from '../../documents/dtos/document-query.dto.js';
import { NOT_BLANK_PATTERN, QueryBoolean, ReadOnlyEcho } from '../../../common/http/validation-decorators.js';
import { COMMENT_SCOPES, type CommentScope } from '../domain/comment.records.js';

export const MAX_COMMENT_LENGTH = 10_000;
export const MAX_MENTIONS = 50;

/** Spec 2.8 CommentTarget. */
export class CommentTargetDto {
  @ApiProperty({ enum: COMMENT_SCOPES })
  @IsIn(COMMENT_SCOPES)
  scope: CommentScope;

  @ApiPropertyOptional({ description: 'Required for scope field and cell: a field of the document metadata', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  fieldId?: string;

  @ApiPropertyOptional({ description: 'Required for scope row and cell: a row of this document', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  rowId?: string;
}

export class CreateCommentDto {
  @ApiPropertyOptional({ type: CommentTargetDto, description: 'Required for a top-level comment; a reply takes its thread\'s target (a given one must equal it)' })
  @IsOptional()
  @ValidateNested()
  @Type(() => CommentTargetDto)
  target?: CommentTargetDto;

  @ApiProperty({ minLength: 1, maxLength: MAX_COMMENT_LENGTH, description: 'Kept as written; whitespace only is refused', pattern: NOT_BLANK_PATTERN.source })
  @IsString()
  @IsNotEmpty()
  @Matches(NOT_BLANK_PATTERN, { message: '$property must not be blank' })
  @MaxLength(MAX_COMMENT_LENGTH)
  content: string;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, description: 'Reply to this comment (of the same document); null or absent: a top-level comment' })
  @IsOptional()
  @IsUUID()
  parentId?: string | null;

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'User ids of people who can read the document; each is notified', maxItems: MAX_MENTIONS })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsUUID('all', { each: true })
  mentions?: string[];
}

export class UpdateCommentDto {
  @ApiPropertyOptional({ description: 'A comment as read may be sent back: its id must then be the path\'s', format: 'uuid' })
  @IsOptional()
  @IsString()
  id?: string;

  @ApiProperty({ minLength: 1, maxLength: MAX_COMMENT_LENGTH, description: 'Kept as written; whitespace only is refused', pattern: NOT_BLANK_PATTERN.source })
  @IsString()
  @IsNotEmpty()
  @Matches(NOT_BLANK_PATTERN, { message: '$property must not be blank' })
  @MaxLength(MAX_COMMENT_LENGTH)
  content: string;

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'Replaces the mentions; people newly mentioned are notified', maxItems: MAX_MENTIONS })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsUUID('all', { each: true })
  mentions?: string[];

  // The rest of a comment as read (docs/comments.md): accepted and ignored. Pinned and resolved states change through
  // their own routes, as a webhook's status does through pause/resume.
  @ReadOnlyEcho() docType?: unknown;
  @ReadOnlyEcho() docId?: unknown;
  @ReadOnlyEcho() target?: unknown;
  @ReadOnlyEcho() targetDeleted?: unknown;
  @ReadOnlyEcho() parentId?: unknown;
  @ReadOnlyEcho() reactions?: unknown;
  @ReadOnlyEcho() pinned?: unknown;
  @ReadOnlyEcho() pinnedAt?: unknown;
  @ReadOnlyEcho() pinnedBy?: unknown;
  @ReadOnlyEcho() resolved?: unknown;
  @ReadOnlyEcho() resolvedAt?: unknown;
  @ReadOnlyEcho() resolvedBy?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
  @ReadOnlyEcho() replies?: unknown;
}

export class ReactionBodyDto {
  @ApiPropertyOptional({ description: 'One emoji (👍) or a short name (:thumbsup: or thumbsup); with the query parameter emoji too, both must name the same reaction (VALIDATION_ERROR otherwise)', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  emoji?: string;
}

/** A reaction write: the document context, `requestId` and the deprecated `apply` as on every comment write, and the emoji. */
export class ReactionQueryDto extends UnversionedWriteQueryDto {
  @ApiPropertyOptional({ description: 'One emoji or a short name', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  emoji?: string;
}

export class ListCommentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: COMMENT_SCOPES })
  @IsOptional()
  @IsIn(COMMENT_SCOPES)
  scope?: CommentScope;

  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) fieldId?: string;

  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) rowId?: string;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  resolved?: boolean;

  @IsOptional() @IsUUID() workspaceId?: string;
  @IsOptional() @IsUUID() organizationId?: string;
}

export class ReactionResponseDto {
  @ApiProperty() emoji: string;
  @ApiProperty({ type: [String], description: 'User ids, in the order they reacted' }) users: string[];
  @ApiProperty() count: number;
}

export class CommentResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() docType: string;
  @ApiProperty() docId: string;
  @ApiProperty({ type: CommentTargetDto }) target: CommentTargetDto;
  @ApiProperty({ description: 'The target row no longer exists (the comment is kept; a restored row restores the link)' }) targetDeleted: boolean;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) parentId: string | null;
  @ApiProperty() content: string;
  @ApiProperty({ type: [String] }) mentions: string[];
  @ApiProperty({ type: [ReactionResponseDto] }) reactions: ReactionResponseDto[];
  @ApiProperty() pinned: boolean;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) pinnedAt: string | null;
  @ApiProperty({ type: String, nullable: true }) pinnedBy: string | null;
  @ApiProperty() resolved: boolean;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) resolvedAt: string | null;
  @ApiProperty({ type: String, nullable: true }) resolvedBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty() createdBy: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty() updatedBy: string;
  @ApiPropertyOptional({ type: () => [CommentResponseDto], description: 'On a top-level comment: its replies, oldest first' })
  replies?: CommentResponseDto[];
}

export class CommentDeleteResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() deleted: boolean;
  @ApiProperty({ description: 'Replies deleted with it (a top-level comment\'s thread; 0 for a reply, whose answers are kept)' }) repliesDeleted: number;
}
