import { Body, Controller, Delete, Get, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { DraftReadQueryDto, PagedScopeQueryDto, PropertiesPatchQueryDto, PropertiesWriteQueryDto } from '../dtos/document-query.dto.js';
import { DocumentPropertiesDto, PropertiesBodyDto, PropertiesWriteResponseDto } from '../dtos/properties.dto.js';
import { PropertyHistoryEntryDto } from '../dtos/revision.dto.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { PropertiesService } from '../services/properties.service.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';
import { ApiWriteConflict } from './write-conflict.openapi.js';

/** Document properties (values of Metadata.properties). */
@ApiTags('documents: properties')
@Controller('doc/:docType/:docId/properties')
@AcceptsApply()
export class PropertiesController {
  constructor(private readonly properties: PropertiesService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Document properties' })
  @ApiEnvelope(DocumentPropertiesDto)
  get(@CurrentDocument() doc: DocumentContext, @Query() query: DraftReadQueryDto): Promise<DocumentPropertiesDto> {
    return this.properties.get(doc, query.requestId);
  }

  @Get('history')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Change history of the properties (merged operations, newest first)' })
  @ApiEnvelope(PropertyHistoryEntryDto, { shape: 'page' })
  history(@CurrentDocument() doc: DocumentContext, @Query() query: PagedScopeQueryDto): Promise<Page<PropertyHistoryEntryDto>> {
    return this.properties.history(doc, query);
  }

  @Post()
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Set the properties (complete set; defaults applied, required enforced)' })
  @ApiEnvelope(PropertiesWriteResponseDto, { status: 201 })
  @ApiWriteConflict('properties')
  create(@CurrentDocument() doc: DocumentContext, @Query() query: PropertiesWriteQueryDto, @Body() body: PropertiesBodyDto): Promise<PropertiesWriteResponseDto> {
    return this.properties.write(doc, body, 'create', query);
  }

  @Put()
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Replace the properties (properties not given are cleared)' })
  @ApiEnvelope(PropertiesWriteResponseDto)
  @ApiWriteConflict('properties')
  replace(@CurrentDocument() doc: DocumentContext, @Query() query: PropertiesWriteQueryDto, @Body() body: PropertiesBodyDto): Promise<PropertiesWriteResponseDto> {
    return this.properties.write(doc, body, 'replace', query);
  }

  @Patch()
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Partial update (merge=true, default) or replace (merge=false); version for optimistic locking' })
  @ApiEnvelope(PropertiesWriteResponseDto)
  @ApiWriteConflict('properties')
  patch(@CurrentDocument() doc: DocumentContext, @Query() query: PropertiesPatchQueryDto, @Body() body: PropertiesBodyDto): Promise<PropertiesWriteResponseDto> {
    return this.properties.write(doc, body, query.merge === false ? 'replace' : 'patch', query);
  }

  @Delete()
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Clear every property value; version for optimistic locking' })
  @ApiEnvelope(PropertiesWriteResponseDto)
  @ApiConflictResponse({
    description:
      'VERSION_CONFLICT: version is not the current version of the properties (payload currentVersion, yourVersion); ' +
      'INVALID_STATE: requestId names a request that is not open; CONFLICT: a concurrent change conflicts with the merge (payload requestId, conflicts)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  remove(@CurrentDocument() doc: DocumentContext, @Query() query: PropertiesWriteQueryDto): Promise<PropertiesWriteResponseDto> {
    return this.properties.remove(doc, query);
  }
}
