import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DocumentScopeQueryDto, RequestListQueryDto } from '../dtos/document-query.dto.js';
import { ConflictsResponseDto, CreateRequestDto, MergeResponseDto, RequestDiffDto, RequestResponseDto } from '../dtos/request.dto.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { RequestsService } from '../services/requests.service.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';

/** Change requests (spec 2.9, 3). */
@ApiTags('documents: requests')
@Controller('doc/:docType/:docId/requests')
export class RequestsController {
  constructor(private readonly requests: RequestsService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Requests of the document, newest first' })
  @ApiEnvelope(RequestResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: RequestListQueryDto): Promise<Page<RequestResponseDto>> {
    return this.requests.list(doc, query);
  }

  @Post()
  @RequireScopes('requests:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Open a request, optionally with changes (validated now, applied on merge)' })
  @ApiEnvelope(RequestResponseDto, { status: 201 })
  @ApiBody({ type: CreateRequestDto, required: false, description: 'Optional: without a body the request is opened empty, titled "Untitled request"' })
  @ApiConflictResponse({
    description:
      'ALREADY_EXISTS: a row-create names a row id that exists (details field changes[i].target.rowId); VERSION_CONFLICT: a row-update carries a version that is not the current one (payload currentVersion, yourVersion)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  create(@CurrentDocument() doc: DocumentContext, @Query() _query: DocumentScopeQueryDto, @Body() dto: CreateRequestDto): Promise<RequestResponseDto> {
    return this.requests.create(doc, dto, { enforceScopes: true });
  }

  @Get(':reqId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One request with its changes' })
  @ApiEnvelope(RequestResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<RequestResponseDto> {
    return this.requests.get(doc, reqId);
  }

  @Get(':reqId/diff')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'What merging would change: added rows, updated cells, deleted rows, properties, fields' })
  @ApiEnvelope(RequestDiffDto)
  diff(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<RequestDiffDto> {
    return this.requests.diff(doc, reqId);
  }

  @Get(':reqId/conflicts')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Conflicts a merge would meet now' })
  @ApiEnvelope(ConflictsResponseDto)
  conflicts(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<ConflictsResponseDto> {
    return this.requests.conflicts(doc, reqId);
  }

  @Post(':reqId/merge')
  @HttpCode(200)
  @RequireScopes('requests:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Merge: applies every change in one transaction and creates a revision; 409 CONFLICT lists conflicts' })
  @ApiEnvelope(MergeResponseDto)
  @ApiConflictResponse({
    description:
      'CONFLICT: changes conflict with the document (payload requestId, conflicts); APPROVAL_REQUIRED: the workflow requires an approved approval (payload requestId, instanceId, status); INVALID_STATE: the request is not open; RESOURCE_LOCKED: a change targets what another user holds an exclusive realtime lock on (payload lock)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  merge(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<MergeResponseDto> {
    return this.requests.merge(doc, reqId, { enforceScopes: true });
  }

  @Post(':reqId/close')
  @HttpCode(200)
  @RequireScopes('requests:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Close an open request' })
  @ApiEnvelope(RequestResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the request is not open (payload requestId, status)', schema: ERROR_ENVELOPE_SCHEMA })
  close(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<RequestResponseDto> {
    return this.requests.close(doc, reqId);
  }

  @Post(':reqId/reopen')
  @HttpCode(200)
  @RequireScopes('requests:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Reopen a closed request' })
  @ApiEnvelope(RequestResponseDto)
  @ApiConflictResponse({ description: 'INVALID_STATE: the request is not closed (payload requestId, status)', schema: ERROR_ENVELOPE_SCHEMA })
  reopen(@CurrentDocument() doc: DocumentContext, @Param('reqId') reqId: string, @Query() _query: DocumentScopeQueryDto): Promise<RequestResponseDto> {
    return this.requests.reopen(doc, reqId);
  }
}
