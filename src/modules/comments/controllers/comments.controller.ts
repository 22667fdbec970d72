import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { CurrentDocument, DocumentAccess, NotDocumentContent } from '../../documents/controllers/document-access.guard.js';
import { DocumentScopeQueryDto, UnversionedWriteQueryDto } from '../../documents/dtos/document-query.dto.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import {
  CommentDeleteResponseDto,
  CommentResponseDto,
  CreateCommentDto,
  ListCommentsQueryDto,
  ReactionBodyDto,
  ReactionQueryDto,
  UpdateCommentDto,
} from '../dtos/comment.dto.js';
import { CommentsService } from '../services/comments.service.js';

/** Comments of a document (spec 2.8 / 4.4, docs/comments.md). Reads need doc:read; writes comments:write and the editor role. */
@ApiTags('documents: comments')
@Controller('doc/:docType/:docId/comments')
// Deleting a comment or a reaction follows the comment rules (author, workspace owner, organization owner/admin),
// not the document's permissions.delete.
@NotDocumentContent()
// Comment writes are saved at once, like view writes: `requestId` and the deprecated `apply` are accepted and
// ignored, `apply` answering X-API-Deprecated (spec 9.4-9.5, docs/comments.md).
@AcceptsApply()
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Threads newest first (filters scope, fieldId, rowId, resolved), each with its replies oldest first' })
  @ApiEnvelope(CommentResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: ListCommentsQueryDto): Promise<Page<CommentResponseDto>> {
    return this.comments.list(doc, query);
  }

  @Post()
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Comment on the document, a field, a row or a cell, or reply (parentId); mentions are notified' })
  @ApiEnvelope(CommentResponseDto, { status: 201 })
  @ApiConflictResponse({
    description: 'AMBIGUOUS_DOCUMENT: no document context was given and several documents the caller can read match (payload candidates)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  create(@CurrentDocument() doc: DocumentContext, @Query() _query: UnversionedWriteQueryDto, @Body() body: CreateCommentDto): Promise<CommentResponseDto> {
    return this.comments.create(doc, body);
  }

  @Get(':commentId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One comment (a top-level one with its replies)' })
  @ApiEnvelope(CommentResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: DocumentScopeQueryDto): Promise<CommentResponseDto> {
    return this.comments.get(doc, commentId);
  }

  @Put(':commentId')
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Edit the content (author only)' })
  @ApiEnvelope(CommentResponseDto)
  update(
    @CurrentDocument() doc: DocumentContext,
    @Param('commentId') commentId: string,
    @Query() _query: UnversionedWriteQueryDto,
    @Body() body: UpdateCommentDto,
  ): Promise<CommentResponseDto> {
    return this.comments.update(doc, commentId, body);
  }

  @Delete(':commentId')
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Delete (author, workspace owner, organization owner/admin); a top-level comment takes its thread with it, a reply only itself (its answers move to its parent)' })
  @ApiEnvelope(CommentDeleteResponseDto)
  remove(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: UnversionedWriteQueryDto): Promise<CommentDeleteResponseDto> {
    return this.comments.remove(doc, commentId);
  }

  @Post(':commentId/pin')
  @HttpCode(200)
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Pin (keeps who and when)' })
  @ApiEnvelope(CommentResponseDto)
  pin(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: UnversionedWriteQueryDto): Promise<CommentResponseDto> {
    return this.comments.setPinned(doc, commentId, true);
  }

  @Post(':commentId/unpin')
  @HttpCode(200)
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Unpin' })
  @ApiEnvelope(CommentResponseDto)
  unpin(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: UnversionedWriteQueryDto): Promise<CommentResponseDto> {
    return this.comments.setPinned(doc, commentId, false);
  }

  @Post(':commentId/resolve')
  @HttpCode(200)
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Resolve (keeps who and when; raises comment_resolved)' })
  @ApiEnvelope(CommentResponseDto)
  resolve(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: UnversionedWriteQueryDto): Promise<CommentResponseDto> {
    return this.comments.setResolved(doc, commentId, true);
  }

  @Post(':commentId/unresolve')
  @HttpCode(200)
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Reopen a resolved comment' })
  @ApiEnvelope(CommentResponseDto)
  unresolve(@CurrentDocument() doc: DocumentContext, @Param('commentId') commentId: string, @Query() _query: UnversionedWriteQueryDto): Promise<CommentResponseDto> {
    return this.comments.setResolved(doc, commentId, false);
  }

  @Post(':commentId/reactions')
  @HttpCode(200)
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'React with an emoji (query or body emoji); one reaction per person per emoji' })
  @ApiEnvelope(CommentResponseDto)
  @ApiBody({ type: ReactionBodyDto, required: false, description: 'Optional: the emoji may be given as query parameter instead' })
  react(
    @CurrentDocument() doc: DocumentContext,
    @Param('commentId') commentId: string,
    @Query() query: ReactionQueryDto,
    @Body() body: ReactionBodyDto,
  ): Promise<CommentResponseDto> {
    return this.comments.addReaction(doc, commentId, { query: query.emoji, body: body.emoji });
  }

  @Delete(':commentId/reactions/:emoji')
  @RequireScopes('comments:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: "Remove the caller's reaction (emoji URL-encoded, or a short name)" })
  @ApiEnvelope(CommentResponseDto)
  unreact(
    @CurrentDocument() doc: DocumentContext,
    @Param('commentId') commentId: string,
    @Param('emoji') emoji: string,
    @Query() _query: UnversionedWriteQueryDto,
  ): Promise<CommentResponseDto> {
    return this.comments.removeReaction(doc, commentId, emoji);
  }
}
