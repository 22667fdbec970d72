import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { DraftReadQueryDto, WriteQueryDto } from '../dtos/document-query.dto.js';
import { MetadataResponseDto, MetadataWriteResponseDto, UpdateMetadataDto } from '../dtos/document.dto.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { MetadataService } from '../services/metadata.service.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';
import { ApiWriteConflict } from './write-conflict.openapi.js';

@ApiTags('documents: metadata')
@Controller('doc/:docType/:docId/metadata')
@AcceptsApply()
export class MetadataController {
  constructor(private readonly metadata: MetadataService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Field definitions (fields and properties)' })
  @ApiEnvelope(MetadataResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Query() query: DraftReadQueryDto): Promise<MetadataResponseDto> {
    return this.metadata.get(doc, query.requestId);
  }

  @Put()
  @RequireScopes('doc:write')
  @DocumentAccess('manage')
  @ApiOperation({ summary: 'Replace the metadata: diffed into field-create/update/delete; type changes convert values' })
  @ApiEnvelope(MetadataWriteResponseDto)
  @ApiWriteConflict('metadata')
  put(@CurrentDocument() doc: DocumentContext, @Query() query: WriteQueryDto, @Body() body: UpdateMetadataDto): Promise<MetadataWriteResponseDto> {
    return this.metadata.put(doc, body, query);
  }
}
