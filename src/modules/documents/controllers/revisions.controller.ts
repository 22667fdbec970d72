import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiConflictResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RawResponse } from '../../../common/http/raw-response.decorator.js';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DocumentScopeQueryDto, PagedScopeQueryDto } from '../dtos/document-query.dto.js';
import { RequestResponseDto } from '../dtos/request.dto.js';
import { ChangeOperationDto, RevisionResponseDto } from '../dtos/revision.dto.js';
import { HistoryEntryDto, RevertResponseDto, RevisionDiffDto, RevisionDiffQueryDto, RevisionExportQueryDto, RevisionHistoryQueryDto } from '../dtos/revision-history.dto.js';
import { CONTENT_TYPES } from '../services/export/export-writers.js';
import { RevisionExportService } from '../services/export/revision-export.service.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { RevisionsService } from '../services/revisions.service.js';
import { RevisionHistoryService } from '../services/revision-history.service.js';
import { RevisionRevertService } from '../services/revision-revert.service.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';

/** The immutable revision history. */
@ApiTags('documents: revisions')
@Controller('doc/:docType/:docId/revisions')
export class RevisionsController {
  constructor(
    private readonly revisions: RevisionsService,
    private readonly history: RevisionHistoryService,
    private readonly reverts: RevisionRevertService,
    private readonly exports: RevisionExportService,
  ) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Revisions, newest first (operations under /{revId}/operations)' })
  @ApiEnvelope(RevisionResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: PagedScopeQueryDto): Promise<Page<RevisionResponseDto>> {
    return this.revisions.list(doc, query);
  }

  // Declared before ':revId' so that `history` is not taken for a revision id.
  @Get('history')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'History of one target (row, cell, field, property, metadata, settings, relation), newest first' })
  @ApiEnvelope(HistoryEntryDto, { shape: 'page' })
  targetHistory(@CurrentDocument() doc: DocumentContext, @Query() query: RevisionHistoryQueryDto): Promise<Page<HistoryEntryDto>> {
    return this.history.targetHistory(doc, query);
  }

  @Get(':revId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One revision with its ChangeOperations (first 1000)' })
  @ApiEnvelope(RevisionResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() _query: DocumentScopeQueryDto): Promise<RevisionResponseDto> {
    return this.revisions.get(doc, revId);
  }

  @Get(':revId/operations')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'The revision\'s ChangeOperations, in order' })
  @ApiEnvelope(ChangeOperationDto, { shape: 'page' })
  operations(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() query: PagedScopeQueryDto): Promise<Page<ChangeOperationDto>> {
    return this.revisions.operations(doc, revId, query);
  }

  @Get(':revId/request')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'The request the revision was merged from' })
  @ApiEnvelope(RequestResponseDto)
  request(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() _query: DocumentScopeQueryDto): Promise<RequestResponseDto> {
    return this.revisions.request(doc, revId);
  }

  @Get(':revId/diff')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'What changed between `base` (default: the previous revision) and this revision; rows paged' })
  @ApiEnvelope(RevisionDiffDto)
  diff(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() query: RevisionDiffQueryDto): Promise<RevisionDiffDto> {
    return this.history.diff(doc, revId, query);
  }

  @Post(':revId/revert')
  @HttpCode(200)
  @RequireScopes('requests:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Open a request undoing the revision and merge it (unless the workflow requires approval)' })
  @ApiEnvelope(RevertResponseDto)
  @ApiConflictResponse({
    description: 'CONFLICT: the undoing changes conflict with the document now (payload requestId of the revert request, which stays open, and conflicts)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  revert(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() _query: DocumentScopeQueryDto): Promise<RevertResponseDto> {
    return this.reverts.revert(doc, revId);
  }

  @Get(':revId/export')
  @RawResponse()
  // Row values leave with the export: data:read as for GET /data, besides doc:read (docs/documents.md).
  @RequireScopes('doc:read', 'data:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'The document as it stood at this revision (or, with what=changes, its operations), streamed as a file' })
  // The file's media types belong to the 200 alone: @ApiProduces would declare every failure (always the JSON
  // envelope) as CSV, NDJSON and XLSX too.
  @ApiResponse({
    status: 200,
    description: 'The export, with a Content-Disposition filename',
    content: Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type.split(';')[0], { schema: { type: 'string', format: 'binary' } }])),
  })
  @ApiResponse({ status: 400, description: 'VALIDATION_ERROR: format or what is not one of the listed values', schema: ERROR_ENVELOPE_SCHEMA })
  export(@CurrentDocument() doc: DocumentContext, @Param('revId') revId: string, @Query() query: RevisionExportQueryDto, @Res() res: Response): Promise<void> {
    return this.exports.export(doc, revId, query, res);
  }
}
