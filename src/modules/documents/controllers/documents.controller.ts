import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { BundleQueryDto, DocumentListQueryDto, DocumentScopeQueryDto, DraftReadQueryDto, WriteQueryDto } from '../dtos/document-query.dto.js';
import {
  CreateDocumentDto,
  DocumentBundleDto,
  DocumentResponseDto,
  SettingsDto,
  SettingsResponseDto,
  SettingsWriteResponseDto,
} from '../dtos/document.dto.js';
import type { DocumentContext, DocumentScope } from '../services/document-access.service.js';
import { DocumentsService } from '../services/documents.service.js';
import { MetadataService } from '../services/metadata.service.js';
import { BodyRequired } from '../../../common/http/body-required.decorator.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';
import { CurrentDocumentScope } from './document-scope.js';

/** Documents: create, list per type and workspace, the bundle, soft delete, settings. */
@ApiTags('documents')
@Controller('doc/:docType')
@AcceptsApply()
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly metadata: MetadataService,
  ) {}

  @Post()
  @RequireScopes('doc:write')
  @ApiParam({ name: 'docType', type: String })
  @ApiOperation({ summary: 'Create a document (body id optional, organizationId, workspaceId, title, metadata, settings)' })
  @ApiEnvelope(DocumentResponseDto, { status: 201 })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: the organization or workspace is unknown, or not one of the caller', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: a document of this type with this id exists in the workspace or organization', schema: ERROR_ENVELOPE_SCHEMA })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('docType') docType: string,
    @Body() dto: CreateDocumentDto,
    @Query() _query: DocumentScopeQueryDto,
    @CurrentDocumentScope() scope: DocumentScope,
  ): Promise<DocumentResponseDto> {
    return this.documents.create(principal, docType, dto, scope);
  }

  @Get()
  @RequireScopes('doc:read')
  @ApiParam({ name: 'docType', type: String })
  @ApiOperation({
    summary: 'Documents of a type in a context',
    description:
      'Workspace context: the workspace\'s documents and its organization\'s organization-level documents; when a data-source reference ' +
      'replaces the type there, the source workspace\'s documents only, read-only. Organization context: organization-level documents. A context is required.',
  })
  @ApiEnvelope(DocumentResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('docType') docType: string,
    @Query() query: DocumentListQueryDto,
    @CurrentDocumentScope() scope: DocumentScope,
  ): Promise<Page<DocumentResponseDto>> {
    return this.documents.list(principal, docType, query, scope);
  }

  @Get(':docId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'The document bundle with the sections named in include' })
  @ApiEnvelope(DocumentBundleDto)
  bundle(@CurrentDocument() doc: DocumentContext, @Query() query: BundleQueryDto): Promise<DocumentBundleDto> {
    return this.documents.bundle(doc, query);
  }

  @Delete(':docId')
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Delete a document (soft delete; the id can be reused)' })
  @ApiEnvelope(DocumentResponseDto)
  remove(@CurrentDocument() doc: DocumentContext, @Query() _query: DocumentScopeQueryDto): Promise<DocumentResponseDto> {
    return this.documents.remove(doc);
  }

  @Get(':docId/settings')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Document settings' })
  @ApiEnvelope(SettingsResponseDto)
  settings(@CurrentDocument() doc: DocumentContext, @Query() query: DraftReadQueryDto): Promise<SettingsResponseDto> {
    return this.metadata.getSettings(doc, query.requestId);
  }

  @Put(':docId/settings')
  @RequireScopes('doc:write')
  @DocumentAccess('manage')
  @BodyRequired()
  @ApiOperation({ summary: 'Replace document settings (permissions, notifications, workflow)' })
  @ApiEnvelope(SettingsWriteResponseDto)
  @ApiConflictResponse({
    description:
      'INVALID_STATE: the request named by requestId is not open (merged or closed); CONFLICT: the merge met a concurrent change (payload requestId, conflicts)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  putSettings(@CurrentDocument() doc: DocumentContext, @Query() query: WriteQueryDto, @Body() body: SettingsDto): Promise<SettingsWriteResponseDto> {
    return this.metadata.putSettings(doc, body, query);
  }
}
