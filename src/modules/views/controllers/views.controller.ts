import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import type { Page } from '../../../common/http/pagination.js';
import { CurrentDocument, DocumentAccess } from '../../documents/controllers/document-access.guard.js';
import { DocumentScopeQueryDto, DraftReadQueryDto, PagedScopeQueryDto, UnversionedWriteQueryDto } from '../../documents/dtos/document-query.dto.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { ChartSeriesDto, CreateViewDto, UpdateViewDto, ViewResponseDto } from '../dtos/view.dto.js';
import { ViewsService } from '../services/views.service.js';

/** Views of a document (spec 2.7, 4.4). Reads need doc:read and read rights; writes views:manage and editor rights. */
@ApiTags('views')
@Controller('doc/:docType/:docId/views')
@AcceptsApply()
export class ViewsController {
  constructor(private readonly views: ViewsService) {}

  @Get()
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: "The document's views (oldest first); isDefault marks the default view" })
  @ApiEnvelope(ViewResponseDto, { shape: 'page' })
  list(@CurrentDocument() doc: DocumentContext, @Query() query: PagedScopeQueryDto): Promise<Page<ViewResponseDto>> {
    return this.views.list(doc, query);
  }

  @Post()
  @RequireScopes('views:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Create a view (config validated against the metadata)' })
  @ApiEnvelope(ViewResponseDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: the document already has a view with this id', schema: ERROR_ENVELOPE_SCHEMA })
  create(@CurrentDocument() doc: DocumentContext, @Query() _query: UnversionedWriteQueryDto, @Body() body: CreateViewDto): Promise<ViewResponseDto> {
    return this.views.create(doc, body);
  }

  @Get(':viewId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One view' })
  @ApiEnvelope(ViewResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('viewId') viewId: string, @Query() _query: DocumentScopeQueryDto): Promise<ViewResponseDto> {
    return this.views.get(doc, viewId);
  }

  @Put(':viewId')
  @RequireScopes('views:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Update a view: the given name, type and config replace the current ones' })
  @ApiEnvelope(ViewResponseDto)
  update(
    @CurrentDocument() doc: DocumentContext,
    @Param('viewId') viewId: string,
    @Query() _query: UnversionedWriteQueryDto,
    @Body() body: UpdateViewDto,
  ): Promise<ViewResponseDto> {
    return this.views.update(doc, viewId, body);
  }

  @Delete(':viewId')
  @RequireScopes('views:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Delete a view' })
  @ApiEnvelope(ViewResponseDto)
  remove(@CurrentDocument() doc: DocumentContext, @Param('viewId') viewId: string, @Query() _query: UnversionedWriteQueryDto): Promise<ViewResponseDto> {
    return this.views.remove(doc, viewId);
  }

  @Post(':viewId/default')
  @HttpCode(200)
  @RequireScopes('views:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: "Make the view the document's default view (one per document)" })
  @ApiEnvelope(ViewResponseDto)
  setDefault(@CurrentDocument() doc: DocumentContext, @Param('viewId') viewId: string, @Query() _query: UnversionedWriteQueryDto): Promise<ViewResponseDto> {
    return this.views.setDefault(doc, viewId);
  }

  @Get(':viewId/series')
  @RequireScopes('doc:read', 'data:read')
  @DocumentAccess('read')
  @ApiOperation({
    summary: "A chart view's series: its rows (the view's filters) grouped by chartConfig.xField, yField aggregated (chartConfig.aggregation, default sum; count without yField), in SQL",
  })
  @ApiEnvelope(ChartSeriesDto)
  series(@CurrentDocument() doc: DocumentContext, @Param('viewId') viewId: string, @Query() query: DraftReadQueryDto): Promise<ChartSeriesDto> {
    return this.views.series(doc, viewId, query.requestId);
  }
}
