import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_CURSOR_LIMIT, MAX_PAGE_SIZE } from '../../../common/http/pagination.js';
import { REQUEST_STATUSES, type RequestStatus } from '../domain/document.records.js';

/** Query-string booleans: `true`/`false` (also `1`/`0`); anything else is left for @IsBoolean to refuse. */
export const QueryBoolean = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value));

const PageProps = {
  page: () => [
    ApiPropertyOptional({ minimum: 1, default: 1, type: 'integer' }),
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(1),
    Max(1_000_000),
  ],
  pageSize: () => [
    ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, type: 'integer' }),
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(1),
    Max(MAX_PAGE_SIZE),
  ],
};

function apply(target: object, key: string, decorators: PropertyDecorator[]): void {
  for (const decorator of decorators) {
    decorator(target, key);
  }
}

/** Every per-document operation: the workspace the document is viewed through (data-source references). */
export class DocumentScopeQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Workspace the document is viewed through; a document served by a data-source reference is read-only there',
  })
  @IsOptional()
  @IsUUID()
  workspaceId?: string;
}

/** Reads that may show a request's draft. */
export class DraftReadQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ description: 'Show the document as it would be after merging this open request' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  requestId?: string;
}

/** Writes: `requestId` appends to an open request; without it the write is its own request, merged at once. */
export class WriteQueryDto extends DraftReadQueryDto {
  @ApiPropertyOptional({ type: Boolean, deprecated: true, description: 'Deprecated: write directly (answers X-API-Deprecated: true)' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  apply?: boolean;
}

export class RowDeleteQueryDto extends WriteQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'Optimistic lock: the version the caller last read' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  version?: number;
}

export class PropertiesPatchQueryDto extends WriteQueryDto {
  @ApiPropertyOptional({ type: Boolean, default: true, description: 'true: only the given properties change; false: full replace' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  merge?: boolean;

  @ApiPropertyOptional({ type: 'integer', description: 'Optimistic lock: the properties version the caller last read' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  version?: number;
}

/** `GET /data`: page + pageSize, or cursor + limit (keyset), and `sort=field:asc|desc[,…]`. */
export class DataListQueryDto extends DraftReadQueryDto {
  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({ example: 'price:desc', description: 'field:asc or field:desc, comma-separated for several keys' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  sort?: string;

  @ApiPropertyOptional({ description: 'Opaque cursor from a previous nextCursor (keyset paging)' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  cursor?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CURSOR_LIMIT, type: 'integer', description: 'Page size of cursor paging' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_CURSOR_LIMIT)
  limit?: number;
}
apply(DataListQueryDto.prototype, 'page', PageProps.page());
apply(DataListQueryDto.prototype, 'pageSize', PageProps.pageSize());

export const BUNDLE_SECTIONS = ['metadata', 'views', 'data', 'comments', 'revisions', 'settings'] as const;
export type BundleSection = (typeof BUNDLE_SECTIONS)[number];

/** `GET /doc/{docType}/{docId}`. */
export class BundleQueryDto extends DraftReadQueryDto {
  @ApiPropertyOptional({ example: 'metadata,data', description: `Comma list of ${BUNDLE_SECTIONS.join(', ')} (default: all)` })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z,\s]*$/)
  @MaxLength(200)
  include?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) viewId?: string;

  page: number = 1;
  pageSize: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(100)
  commentsLimit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(100)
  revisionsLimit?: number;
}
apply(BundleQueryDto.prototype, 'page', PageProps.page());
apply(BundleQueryDto.prototype, 'pageSize', PageProps.pageSize());

/** `GET /doc/{docType}?workspaceId=…`. */
export class DocumentListQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Required: the workspace whose documents of this type are listed' })
  @IsUUID()
  workspaceId: string;

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

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) rowId?: string;
}
