import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiExtraModels, ApiHeader, ApiOperation, ApiTags, type SchemaObject } from '@nestjs/swagger';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { CursorPage } from '../../../common/http/pagination.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { DataListQueryDto, DraftReadQueryDto, QueryReadQueryDto, RowDeleteQueryDto, WriteQueryDto } from '../dtos/document-query.dto.js';
import {
  BulkResultDto,
  CreateRowDto,
  GroupedQueryResultDto,
  RowDeleteResponseDto,
  RowReadResponseDto,
  RowResponseDto,
  RowWriteResponseDto,
  UpdateRowDto,
} from '../dtos/row.dto.js';
import { RowCursorPageDto, RowPageDto } from '../dtos/document.dto.js';
import type { DocumentContext } from '../services/document-access.service.js';
import { RowQueryService, type RowPage } from '../services/row-query.service.js';
import { RowsService } from '../services/rows.service.js';
import { AcceptsApply } from '../../../common/http/deprecated.decorator.js';
import { CurrentDocument, DocumentAccess } from './document-access.guard.js';
import { ApiWriteConflict } from './write-conflict.openapi.js';

const COUNT_MODE_DESCRIPTION =
  'Totals (count parameter or Prefer: count=…): exact = count(*) of the filter; estimated (default) = exact when nothing filters, the document ' +
  'has at most QUERY_EXACT_COUNT_MAX_ROWS rows or the page is the last, otherwise the planner estimate (totalExact false); none = no total ' +
  '(total and totalPages null). The page carries totalExact and countMode, and readOnly: true when the workspace serves the type through an ' +
  'active data-source reference (the source workspace\'s rows; spec 2.3).';

const QUERY_BODY_SCHEMA = {
  type: 'object',
  description: 'Structured form (filters, sorts, groupBy, page, pageSize) or short form (filter, sort); cursor + limit for keyset paging',
  example: {
    filters: { logic: 'and', conditions: [{ field: 'price', operator: 'range', rangeStart: 10, rangeEnd: 20 }], groups: [] },
    sorts: [{ field: 'price', direction: 'desc' }],
    page: 1,
    pageSize: 20,
  },
  properties: {
    filters: { type: 'object', description: 'FilterGroup {logic, conditions[], groups[]} (structured form)' },
    filter: { type: 'object', description: 'Short form: {and: [...]} or {or: [...]} of {field, op, value}' },
    sorts: { type: 'array', items: { type: 'object' }, description: '[{field, direction: asc|desc}]' },
    sort: { type: 'array', items: { type: 'object' }, description: 'Short form: [{field, order}]' },
    groupBy: { type: 'object', description: '{fields: string[], aggregations: [{kind, field}]}' },
    page: { type: 'integer', minimum: 1, maximum: 1000000, default: 1 },
    pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    cursor: { type: 'string', description: 'nextCursor of the previous cursor page' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Cursor page size (default 100)' },
    count: { type: 'string', enum: ['exact', 'estimated', 'none'] },
  },
  // Any other key is refused (VALIDATION_ERROR naming it): a misspelt one would silently query everything.
  additionalProperties: false,
};

const BULK_TARGET_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'Exactly one of {row, field}, {row}, {rows[], field}, {property}, {properties: true}',
  properties: {
    row: { type: 'string' },
    rows: { type: 'array', items: { type: 'string' } },
    field: { type: 'string' },
    property: { type: 'string' },
    properties: { type: 'boolean', enum: [true] },
  },
  additionalProperties: false,
};
const BULK_ITEMS_SCHEMA: SchemaObject = {
  type: 'array',
  items: {
    type: 'object',
    required: ['target'],
    properties: { target: BULK_TARGET_SCHEMA, value: { description: 'A Value (null clears); required for {row, field}, {rows, field} and {property}' } },
    additionalProperties: false,
  },
};

// Spec 4.4's three body forms: the array, {updates: [...]}, and the order-book form {rows: [{target: {row}, values}]}.
const BULK_BODY_SCHEMA: SchemaObject = {
  description:
    'Targets: {row, field}, {row}, {rows[], field}, {property}, {properties: true} (property targets also need doc:write); at most 1000 rows; all or nothing',
  oneOf: [
    BULK_ITEMS_SCHEMA,
    { type: 'object', required: ['updates'], properties: { updates: BULK_ITEMS_SCHEMA }, additionalProperties: false },
    {
      type: 'object',
      required: ['rows'],
      description: 'Order-book form: values of one row per item; metadata accepted and not stored',
      properties: {
        rows: {
          type: 'array',
          items: {
            type: 'object',
            required: ['target'],
            properties: { target: BULK_TARGET_SCHEMA, values: { description: 'ValueEntry[] or an object of field id to Value' }, value: {}, metadata: { type: 'object' } },
            additionalProperties: false,
          },
        },
      },
      additionalProperties: false,
    },
  ],
  example: [{ target: { row: 'r1', field: 'price' }, value: { number: 12 } }, { target: { rows: ['r2', 'r3'], field: 'status' }, value: { selectOption: 'done' } }],
};

/** The 409s of a write that may name a request (`requestId`) and merges at once otherwise. */
const WRITE_409 = {
  invalidState: 'INVALID_STATE: requestId names a request that is not open (merged or closed)',
  conflict: 'CONFLICT: a concurrent change conflicts with the merge (payload requestId, conflicts)',
};

/** Rows: `/data` and the equivalent `/rows` forms (spec 4.4). */
@ApiTags('documents: data')
@ApiExtraModels(RowResponseDto, RowPageDto, GroupedQueryResultDto)
@Controller('doc/:docType/:docId')
@AcceptsApply()
export class DataController {
  constructor(
    private readonly rows: RowsService,
    private readonly queries: RowQueryService,
  ) {}

  @Get(['data', 'rows'])
  @RequireScopes('data:read')
  @DocumentAccess('read')
  @ApiOperation({
    summary: 'Rows: page + pageSize, or cursor + limit (keyset); sort=field:asc|desc',
    description: COUNT_MODE_DESCRIPTION,
  })
  @ApiHeader({ name: 'Prefer', required: false, description: 'count=exact|estimated|none (RFC 7240), same as the count parameter' })
  @ApiEnvelope(RowPageDto, { oneOf: [RowCursorPageDto], description: 'A page; with cursor/limit a cursor page {items, limit, nextCursor, readOnly}' })
  list(
    @CurrentDocument() doc: DocumentContext,
    @Query() query: DataListQueryDto,
    @Headers('prefer') prefer: string | undefined,
  ): Promise<RowPage<RowResponseDto> | CursorPage<RowResponseDto>> {
    return this.queries.list(doc, query, prefer);
  }

  @Post(['data/query', 'rows/query'])
  @HttpCode(200)
  @RequireScopes('data:read')
  @DocumentAccess('read')
  @ApiOperation({
    summary: 'Query rows: filters, sorts, groupBy with aggregations, paging — executed in PostgreSQL',
    description: `Body key count (exact|estimated|none) or the Prefer header. ${COUNT_MODE_DESCRIPTION}`,
  })
  @ApiHeader({ name: 'Prefer', required: false, description: 'count=exact|estimated|none (RFC 7240), same as the body key count' })
  @ApiBody({ schema: QUERY_BODY_SCHEMA })
  @ApiEnvelope(RowPageDto, { oneOf: [RowCursorPageDto, GroupedQueryResultDto], description: 'A page of rows; with cursor/limit a cursor page; with groupBy: GroupedQueryResultDto' })
  query(
    @CurrentDocument() doc: DocumentContext,
    @Query() query: QueryReadQueryDto,
    @Body() body: unknown,
    @Headers('prefer') prefer: string | undefined,
  ): Promise<RowPage<RowResponseDto> | CursorPage<RowResponseDto> | GroupedQueryResultDto> {
    return this.queries.query(doc, body, query.requestId, prefer, query.viewId);
  }

  @Post(['data/bulk', 'rows/batch-update'])
  @HttpCode(200)
  @RequireScopes('data:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Bulk update (all or nothing, at most 1000 rows)' })
  @ApiBody({ schema: BULK_BODY_SCHEMA })
  @ApiEnvelope(BulkResultDto)
  @ApiConflictResponse({ description: `${WRITE_409.invalidState}; ${WRITE_409.conflict}`, schema: ERROR_ENVELOPE_SCHEMA })
  bulk(@CurrentDocument() doc: DocumentContext, @Query() query: WriteQueryDto, @Body() body: unknown): Promise<BulkResultDto> {
    return this.rows.bulk(doc, body, query);
  }

  @Post(['data', 'rows'])
  @RequireScopes('data:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Create a row' })
  @ApiEnvelope(RowWriteResponseDto, { status: 201 })
  @ApiConflictResponse({
    description: `ALREADY_EXISTS: a row with this id exists; ${WRITE_409.invalidState}; ${WRITE_409.conflict}`,
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  create(@CurrentDocument() doc: DocumentContext, @Query() query: WriteQueryDto, @Body() body: CreateRowDto): Promise<RowWriteResponseDto> {
    return this.rows.create(doc, body, query);
  }

  @Get(['data/:rowId', 'rows/:rowId'])
  @RequireScopes('data:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One row (readOnly: served through a data-source reference)' })
  @ApiEnvelope(RowReadResponseDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('rowId') rowId: string, @Query() query: DraftReadQueryDto): Promise<RowResponseDto> {
    return this.queries.get(doc, rowId, query.requestId);
  }

  @Put(['data/:rowId', 'rows/:rowId'])
  @RequireScopes('data:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Update a row: the given values change (null clears); version for optimistic locking' })
  @ApiEnvelope(RowWriteResponseDto)
  @ApiWriteConflict('row')
  update(
    @CurrentDocument() doc: DocumentContext,
    @Param('rowId') rowId: string,
    @Query() query: WriteQueryDto,
    @Body() body: UpdateRowDto,
  ): Promise<RowWriteResponseDto> {
    return this.rows.update(doc, rowId, body, query);
  }

  @Delete(['data/:rowId', 'rows/:rowId'])
  @RequireScopes('data:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Delete a row (its last values stay in the revision)' })
  @ApiEnvelope(RowDeleteResponseDto)
  @ApiWriteConflict('row')
  remove(@CurrentDocument() doc: DocumentContext, @Param('rowId') rowId: string, @Query() query: RowDeleteQueryDto): Promise<RowDeleteResponseDto> {
    return this.rows.remove(doc, rowId, query);
  }
}
