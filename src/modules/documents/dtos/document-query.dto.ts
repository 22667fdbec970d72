import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_CURSOR_LIMIT, MAX_PAGE_SIZE, QueryInt } from '../../../common/http/pagination.js';
import { DeprecatedApplyParam, QueryBoolean } from '../../../common/http/validation-decorators.js';
import { REQUEST_STATUSES, type RequestStatus } from '../domain/document.records.js';
import { COUNT_MODES, type CountMode, DEFAULT_COUNT_MODE } from '../query/count-mode.js';

const PageProps = {
  page: () => [
    ApiPropertyOptional({ minimum: 1, maximum: 1_000_000, default: 1, type: 'integer' }),
    IsOptional(),
    QueryInt(),
    IsInt(),
    Min(1),
    Max(1_000_000),
  ],
  pageSize: () => [
    ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, type: 'integer' }),
    IsOptional(),
    QueryInt(),
    IsInt(),
    Min(1),
    Max(MAX_PAGE_SIZE),
  ],
};

/**
 * A query parameter given several times (`?sort=a:asc&sort=b:desc`, or `sort[]=` with the extended parser) arrives as
 * an array of strings; it reads as the comma list it stands for. Anything else is left for the type check to refuse.
 */
function joinRepeatedParam(value: unknown): unknown {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value.join(',') : value;
}

function apply(target: object, key: string, decorators: PropertyDecorator[]): void {
  for (const decorator of decorators) {
    decorator(target, key);
  }
}

/**
 * Every `/doc/...` operation: the document context (docs/documents.md). The OpenAPI document declares these two
 * parameters and their header forms once, under components.parameters (see document-scope.openapi.ts).
 */
export class DocumentScopeQueryDto {
  @IsOptional()
  @IsUUID()
  workspaceId?: string;

  @IsOptional()
  @IsUUID()
  organizationId?: string;
}

/**
 * Writes to document-scoped things that are not versioned through requests (views, docs/views.md). Spec 1 binds
 * writes to a request with `requestId` and spec 9 keeps the deprecated `apply`: both are accepted and ignored here
 * (such a write is saved at once either way), `apply` still answering `X-API-Deprecated: true`.
 */
export class UnversionedWriteQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ description: 'Accepted and ignored: this write is saved at once, not recorded on a request', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  requestId?: string;

  @DeprecatedApplyParam('accepted and ignored')
  apply?: boolean;
}

/** Reads that may show a request's draft. */
export class DraftReadQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ description: 'Show the document as it would be after merging this open request', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  requestId?: string;
}

/** `POST /data/query`: a view to apply, narrowed by the body's filters (docs/views.md). */
export class QueryReadQueryDto extends DraftReadQueryDto {
  @ApiPropertyOptional({ description: "Apply this view: the body's filters narrow it, the body's sorts come first, only its columns in values", maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  viewId?: string;
}

/** Writes: `requestId` appends to an open request; without it the write is its own request, merged at once. */
export class WriteQueryDto extends DraftReadQueryDto {
  @DeprecatedApplyParam('write directly (a workflow that requires approval still holds the write for it)')
  apply?: boolean;
}

export class RowDeleteQueryDto extends WriteQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Optimistic lock: the version the caller last read' })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  version?: number;
}

/** Writes of `/properties`: version locking applies to every one of them (docs/documents.md). */
export class PropertiesWriteQueryDto extends WriteQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Optimistic lock: the properties version the caller last read (a body version, when also given, must be the same); with requestId, the committed version re-bases properties in conflict (docs/documents.md)',
  })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  version?: number;
}

export class PropertiesPatchQueryDto extends PropertiesWriteQueryDto {
  @ApiPropertyOptional({ type: Boolean, default: true, description: 'true: only the given properties change; false: full replace' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  merge?: boolean;
}

/** `GET /data`: page + pageSize, or cursor + limit (keyset), and `sort=field:asc|desc[,…]`. */
export class DataListQueryDto extends DraftReadQueryDto {
  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({
    example: 'price:desc',
    description: 'field:asc or field:desc, comma-separated or the parameter repeated (sort=a:asc&sort=b:desc) for several keys',
    maxLength: 1000,
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => joinRepeatedParam(value))
  @IsString()
  @MaxLength(1000)
  sort?: string;

  @ApiPropertyOptional({ description: 'Opaque cursor from a previous nextCursor (keyset paging)', maxLength: 4096 })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  cursor?: string;

  @ApiPropertyOptional({
    enum: COUNT_MODES,
    default: DEFAULT_COUNT_MODE,
    description: 'How the total is counted: exact, estimated (exact for small documents, planner estimate for large filtered ones), none',
  })
  @IsOptional()
  @IsIn(COUNT_MODES)
  count?: CountMode;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CURSOR_LIMIT, type: 'integer', description: 'Page size of cursor paging' })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(MAX_CURSOR_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ description: "Apply this view: its filters, then its sorts after any explicit sort, only its columns in values (docs/views.md)", maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  viewId?: string;
}
apply(DataListQueryDto.prototype, 'page', PageProps.page());
apply(DataListQueryDto.prototype, 'pageSize', PageProps.pageSize());

export const BUNDLE_SECTIONS = ['metadata', 'views', 'data', 'comments', 'revisions', 'settings'] as const;
export type BundleSection = (typeof BUNDLE_SECTIONS)[number];
/** The characters of a comma list of sections (the names are checked by the service). */
const BUNDLE_INCLUDE_PATTERN = /^[a-z,\s]*$/;

/** `GET /doc/{docType}/{docId}`. */
export class BundleQueryDto extends DraftReadQueryDto {
  @ApiPropertyOptional({ example: 'metadata,data', description: `Comma list of ${BUNDLE_SECTIONS.join(', ')} (default: all)`, pattern: BUNDLE_INCLUDE_PATTERN.source, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Matches(BUNDLE_INCLUDE_PATTERN)
  @MaxLength(200)
  include?: string;

  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) viewId?: string;

  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100, default: 20 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  @Max(100)
  commentsLimit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100, default: 20 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  @Max(100)
  revisionsLimit?: number;
}
apply(BundleQueryDto.prototype, 'page', PageProps.page());
apply(BundleQueryDto.prototype, 'pageSize', PageProps.pageSize());

/** `GET /doc/{docType}?workspaceId=…` (or `organizationId`, or the header forms: one of them is required). */
export class DocumentListQueryDto extends DocumentScopeQueryDto {
  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;
}
apply(DocumentListQueryDto.prototype, 'page', PageProps.page());
apply(DocumentListQueryDto.prototype, 'pageSize', PageProps.pageSize());

export class RequestListQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ enum: REQUEST_STATUSES }) @IsOptional() @IsIn(REQUEST_STATUSES) status?: RequestStatus;
  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;
}
apply(RequestListQueryDto.prototype, 'page', PageProps.page());
apply(RequestListQueryDto.prototype, 'pageSize', PageProps.pageSize());

export class PagedScopeQueryDto extends DocumentScopeQueryDto {
  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;
}
apply(PagedScopeQueryDto.prototype, 'page', PageProps.page());
apply(PagedScopeQueryDto.prototype, 'pageSize', PageProps.pageSize());

export class RevisionHistoryQueryDto extends PagedScopeQueryDto {
  @ApiPropertyOptional({ enum: ['row', 'field', 'metadata', 'settings', 'property'] })
  @IsOptional()
  @IsIn(['row', 'field', 'metadata', 'settings', 'property'])
  targetKind?: string;

  @ApiPropertyOptional({ maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) rowId?: string;
}
