import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
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
