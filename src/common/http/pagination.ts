import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { AppException } from '../errors/app.exception.js';

export const DEFAULT_PAGE_SIZE = 20;
/** Larger values are rejected with VALIDATION_ERROR (not clamped), so a client never silently gets less. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_CURSOR_LIMIT = 100;
export const MAX_CURSOR_LIMIT = 1000;

/**
 * An integer query parameter: decimal digits only. `@Type(() => Number)` read `0x10` as 16, `1e2` as 100 and `+2`
 * as 2; anything else (a repeated parameter, `abc`, `2.5`) stays as sent and fails `@IsInt()`.
 */
export function QueryInt(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => decimalIntegerOf(value));
}

/** A string of decimal digits (optional minus, at most 15 digits: exact as a number) as its number; anything else as given. */
export function decimalIntegerOf(value: unknown): unknown {
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}

/**
 * An int64 body field (spec 2.6: the row and properties `version`): a JSON number, or the decimal string proto3 JSON
 * writes an int64 as (duration values take both as well, docs/values.md). Other strings stay as sent for `@IsInt()`.
 */
export const Int64Body = QueryInt;

/** `page` + `pageSize`, the one paging query every list takes. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000, default: 1, type: 'integer' })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, type: 'integer' })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize: number = DEFAULT_PAGE_SIZE;
}

/** `cursor` + `limit`, for deep paging with keyset cursors. */
export class CursorQueryDto {
  @ApiPropertyOptional({ description: 'Opaque cursor from a previous nextCursor', maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  cursor?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_CURSOR_LIMIT,
    default: DEFAULT_CURSOR_LIMIT,
    type: 'integer',
  })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(MAX_CURSOR_LIMIT)
  limit?: number;
}

export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
}

export interface CursorPage<T> {
  items: T[];
  limit: number;
  nextCursor: string | null;
}

export function pageOf<T>(items: T[], total: number, query: { page: number; pageSize: number }): Page<T> {
  return {
    items,
    page: query.page,
    pageSize: query.pageSize,
    total,
    totalPages: Math.ceil(total / query.pageSize),
  };
}

/** OFFSET for a page query. */
export function offsetOf(query: { page: number; pageSize: number }): number {
  return (query.page - 1) * query.pageSize;
}

/** Cursors are base64url JSON with a kind tag, so a cursor of one list is refused by another. */
export function encodeCursor(kind: string, position: unknown[]): string {
  return Buffer.from(JSON.stringify({ k: kind, p: position }), 'utf8').toString('base64url');
}

export function decodeCursor(kind: string, cursor: string): unknown[] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      k?: unknown;
      p?: unknown;
    };
    if (parsed.k === kind && Array.isArray(parsed.p)) {
      return parsed.p;
    }
  } catch {
    // fall through to the validation error below
  }
  throw AppException.validation([{ field: 'cursor', reason: 'invalid cursor' }]);
}

/** A page of a short list held whole (online users, live locks: a few per document), in the paged structure. */
export function pageOfList<T>(items: readonly T[], query: { page: number; pageSize: number }): Page<T> {
  const offset = offsetOf(query);
  return pageOf(items.slice(offset, offset + query.pageSize), items.length, query);
}
