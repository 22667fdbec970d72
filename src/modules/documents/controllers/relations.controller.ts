import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { CreateRelationDto, CreateRelationQueryDto, ListRelationsQueryDto, RelationResponseDto, RelationWriteResponseDto } from '../dtos/relation.dto.js';
import type { DocumentContext, DocumentScope } from '../services/document-access.service.js';
import { RelationsService } from '../services/relations.service.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';
import { CurrentDocumentScope } from './document-scope.js';

/** Relations between rows (spec 4.4, docs/documents.md "Relations"). */
@ApiTags('documents: relations')
@Controller()
export class RelationsController {
  constructor(private readonly relations: RelationsService) {}

  @Post('relations')
  @AcceptsApply()
  @RequireScopes('data:write')
  @ApiOperation({ summary: 'Create an edge from a row (write on its document) to a row (read) of the same organization; through a request like any write' })
  @ApiEnvelope(RelationWriteResponseDto, { status: 201 })
  @ApiNotFoundResponse({
    description:
      "DOC_NOT_FOUND: an end's document is unknown, of another organization or in a workspace the caller cannot see; " +
      'NOT_FOUND: requestId names no request of the source document',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiConflictResponse({
    description:
      'ALREADY_EXISTS: the same edge exists (payload relationId); AMBIGUOUS_DOCUMENT: an end without context matches ' +
      'several documents; INVALID_STATE: requestId names a request that is not open; CONFLICT: a concurrent change ' +
      'conflicts with the merge; RESOURCE_LOCKED: another user holds an exclusive realtime lock on the source document',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @CurrentDocumentScope() scope: DocumentScope,
    @Query() query: CreateRelationQueryDto,
    @Body() body: CreateRelationDto,
  ): Promise<RelationWriteResponseDto> {
    return this.relations.create(principal, scope, body, { requestId: query.requestId, apply: query.apply });
  }

  @Get('doc/:docType/:docId/relations')
  @RequireScopes('data:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Edges of the document: outgoing (default) or incoming; filters type and rowId; newest first' })
  @ApiEnvelope(RelationResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: ListRelationsQueryDto): Promise<Page<RelationResponseDto>> {
    return this.relations.list(doc, query);
  }
}
