import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import type { FieldDefinition } from '../fields/field.types.js';
import type { DocumentRecord } from '../domain/document.records.js';
import { normalizeQuery, QUERY_LIMITS } from '../query/query-normalizer.js';
import type { FilterNode, QueryAst } from '../query/query.types.js';

/** The parts of a view's `config` a query uses (spec 2.7). */
export interface ViewQuerySource {
  filters?: unknown;
  filter?: unknown;
  sorts?: unknown;
  sort?: unknown;
  columns?: unknown;
}

/** Finds a view of a document by id (null when the document has no such view). */
export type ViewLookup = (document: DocumentRecord, viewId: string) => Promise<ViewQuerySource | null>;

/** A short-form filter (`{and|or: [...]}` or one `{field, op, value}`) rather than a structured FilterGroup. */
function isShortFilter(raw: unknown): boolean {
  return isPlainObject(raw) && (raw.and !== undefined || raw.or !== undefined || raw.field !== undefined);
}

/**
 * The query a view's config describes, in the language of `POST /data/query`: `filters` in either shape (a
 * structured FilterGroup, or the short form), `sorts` as `[{field, direction}]` or `[{field, order}]`; `filter` and
 * `sort` (the short form's own keys) are read too. VALIDATION_ERROR paths are prefixed with `config.`.
 * `strict` (a view being written): a key outside the query language's is refused, as in `POST /data/query`;
 * stored views are read leniently.
 */
export function viewQueryAst(config: ViewQuerySource, options: { strict?: boolean } = {}): QueryAst {
  const input: Record<string, unknown> = {};
  const shortFilters = isShortFilter(config.filters);
  if (config.filters !== undefined && config.filters !== null) {
    input[shortFilters ? 'filter' : 'filters'] = config.filters;
  }
  if (config.filter !== undefined && config.filter !== null && !shortFilters) {
    input.filter = config.filter;
  }
  if (config.sorts !== undefined && config.sorts !== null) {
    input.sorts = config.sorts;
  }
  if (config.sort !== undefined && config.sort !== null) {
    input.sort = config.sort;
  }
  try {
    return normalizeQuery(input, options);
  } catch (error) {
    throw prefixDetails(error, shortFilters);
  }
}

/** Re-labels a query validation error's paths as paths inside a view config. */
export function prefixDetails(error: unknown, shortFilters = false): unknown {
  if (!(error instanceof AppException) || error.options.details === undefined) {
    return error;
  }
  const details: ErrorDetail[] = error.options.details.map((detail) => {
    const field = typeof detail.field === 'string' ? detail.field : undefined;
    if (!field || field.startsWith('config.')) {
      return detail;
    }
    const renamed = shortFilters && (field === 'filter' || field.startsWith('filter.') || field.startsWith('filter[')) ? `filters${field.slice('filter'.length)}` : field;
    return { ...detail, field: `config.${renamed}` };
  });
  return AppException.validation(details);
}

/**
 * A view applied to a query: the view's filter AND the explicit one (explicit parameters narrow the view), the
 * explicit sorts first and the view's after them as tie-breakers (a field sorted explicitly is not sorted again),
 * at most QUERY_LIMITS.maxSorts keys.
 */
export function combineWithView(explicit: QueryAst, view: QueryAst): QueryAst {
  const filters = [view.filter, explicit.filter].filter((node): node is FilterNode => node !== null);
  const filter: FilterNode | null =
    filters.length === 0 ? null : filters.length === 1 ? (filters[0] as FilterNode) : { kind: 'group', logic: 'and', children: filters, path: 'filters' };
  const explicitFields = new Set(explicit.sorts.map((sort) => sort.field));
  const sorts = [...explicit.sorts, ...view.sorts.filter((sort) => !explicitFields.has(sort.field))].slice(0, QUERY_LIMITS.maxSorts);
  return { filter, sorts, groupBy: explicit.groupBy };
}

/** The fields a view shows, in its `columns` order (unknown ids skipped); null when it names none (all fields). */
export function viewColumns(config: ViewQuerySource, fields: readonly FieldDefinition[]): FieldDefinition[] | null {
  if (!Array.isArray(config.columns) || config.columns.length === 0) {
    return null;
  }
  const byId = new Map(fields.map((field) => [field.id, field]));
  return config.columns.flatMap((id: unknown) => (typeof id === 'string' && byId.has(id) ? [byId.get(id) as FieldDefinition] : []));
}

/**
 * Applies a view named by `viewId` to reads (`GET /data`, `POST /data/query`, the bundle). The views module
 * supplies the lookup at start-up; the documents module does not depend on it. Unknown view → NOT_FOUND.
 */
@Injectable()
export class ViewResolver {
  private lookup: ViewLookup | null = null;

  use(lookup: ViewLookup): void {
    this.lookup = lookup;
  }

  async apply(
    document: DocumentRecord,
    fields: readonly FieldDefinition[],
    ast: QueryAst,
    viewId: string | undefined,
  ): Promise<{ ast: QueryAst; columns: FieldDefinition[] | null }> {
    if (viewId === undefined || viewId === '') {
      return { ast, columns: null };
    }
    const view = this.lookup ? await this.lookup(document, viewId) : null;
    if (!view) {
      throw new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'viewId', reason: `view ${viewId} not found` }] });
    }
    return { ast: combineWithView(ast, viewQueryAst(view)), columns: viewColumns(view, fields) };
  }
}
