import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { BodyRequired } from '../../../common/http/body-required.decorator.js';
import { DocumentScopeQueryDto } from '../dtos/document-query.dto.js';
import { TypeSettingsDto, TypeSettingsResponseDto } from '../dtos/type-settings.dto.js';
import type { DocumentScope } from '../services/document-access.service.js';
import { TypeSettingsService } from '../services/type-settings.service.js';
import { CurrentDocumentScope } from './document-scope.js';

/**
 * Type-level settings. Registered before DocumentsController (documents.module.ts) so `/doc/{docType}/setting` is
 * this route and never the bundle of a document whose id is "setting" (docs/settings.md).
 */
@ApiTags('documents')
@Controller('doc/:docType/setting')
export class TypeSettingsController {
  constructor(private readonly settings: TypeSettingsService) {}

  @Get()
  @RequireScopes('doc:read')
  @ApiParam({ name: 'docType', type: String })
  @ApiOperation({ summary: 'Type-level settings in a workspace context (or organizationId for organization-level documents)' })
  @ApiEnvelope(TypeSettingsResponseDto)
  @ApiNotFoundResponse({ description: 'DOC_NOT_FOUND: a workspace or organization the caller cannot see (docs/settings.md)', schema: ERROR_ENVELOPE_SCHEMA })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('docType') docType: string,
    @Query() _query: DocumentScopeQueryDto,
    @CurrentDocumentScope() scope: DocumentScope,
  ): Promise<TypeSettingsResponseDto> {
    return this.settings.get(principal, docType, scope);
  }

  @Put()
  @RequireScopes('doc:write')
  @BodyRequired()
  @ApiParam({ name: 'docType', type: String })
  @ApiOperation({ summary: 'Replace the type-level settings (defaultViewId, sharing, permissions, retention); needs manage rights' })
  @ApiEnvelope(TypeSettingsResponseDto)
  @ApiNotFoundResponse({ description: 'DOC_NOT_FOUND: a workspace or organization the caller cannot see (docs/settings.md)', schema: ERROR_ENVELOPE_SCHEMA })
  put(
    @CurrentPrincipal() principal: Principal,
    @Param('docType') docType: string,
    @Query() _query: DocumentScopeQueryDto,
    @CurrentDocumentScope() scope: DocumentScope,
    @Body() body: TypeSettingsDto,
  ): Promise<TypeSettingsResponseDto> {
    return this.settings.put(principal, docType, scope, body);
  }
}
