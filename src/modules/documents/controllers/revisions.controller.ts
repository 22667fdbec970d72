import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DocumentScopeQueryDto, PagedScopeQueryDto } from '../dtos/document-query.dto.js';
import { RequestResponseDto } from '../dtos/request.dto.js';
import { ChangeOperationDto, RevisionResponseDto } from '../dtos/revision.dto.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { RevisionsService } from '../services/revisions.service.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';

/** The immutable revision history. */
@ApiTags('documents: revisions')
@Controller('doc/:docType/:docId/revisions')
export class RevisionsController {
  constructor(private readonly revisions: RevisionsService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Revisions, newest first (operations under /{revId}/operations)' })
  @ApiEnvelope(RevisionResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: PagedScopeQueryDto): Promise<Page<RevisionResponseDto>> {
    return this.revisions.list(doc, query);
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
}
