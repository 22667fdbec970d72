import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import {
  type CursorPage,
  DEFAULT_CURSOR_LIMIT,
  DEFAULT_PAGE_SIZE,
  decodeCursor,
  encodeCursor,
  MAX_CURSOR_LIMIT,
  MAX_PAGE_SIZE,
  type Page,
} from '../../../common/http/pagination.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';
import { storedToValue } from '../fields/field-type.registry.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import { SYSTEM_QUERY_FIELDS } from '../query/field-resolver.js';
import { COUNT_MODES, type CountMode, DEFAULT_COUNT_MODE, resolveCountMode } from '../query/count-mode.js';
import { cursorPositionForSeal, cursorPositionFromRow, isCursorKeyRef, resolveCursorKeyRefs } from '../query/keyset-sort.js';
import { isInstant } from '../query/formula-sql.js';
import { compileAst } from '../query/query.compiler.js';
import { normalizeQuery, parseSortParam } from '../query/query-normalizer.js';
import type { CompiledQuery, QueryAst } from '../query/query.types.js';
import type { RowRecord } from '../domain/document.records.js';
import type { GroupedQueryResultDto, RowReadResponseDto, RowResponseDto } from '../dtos/row.dto.js';
import { toRowDto } from '../mappers/document.mapper.js';
import { RowQueryRepository } from '../repositories/row-query.repository.js';
import { RowRepository } from '../repositories/row.repository.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import { rowNotFound } from './change-builders.js';
import type { DocumentContext } from './document-access.service.js';
import { DocumentIndexService } from './document-index.service.js';
import { DraftReadService, type DraftView } from './draft-read.service.js';
import { ViewResolver } from './view-resolver.js';
import { SecretBoxService } from '../../identity/services/secret-box.service.js';

const CURSOR_KIND = 'rows';
/** Separates a cursor's document and sort from the instant of its walk (`…:<sort>@2024-05-01T08:00:00.000Z`). */
const AS_OF_MARK = '@';
/** Keys of a `POST /data/query` body: both forms of spec 2.12, paging, cursor paging and the count mode. */
const QUERY_BODY_KEYS: ReadonlySet<string> = new Set(['filters', 'filter', 'sorts', 'sort', 'groupBy', 'page', 'pageSize', 'cursor', 'limit', 'count']);

export interface Paging {
  page: number;
  pageSize: number;
  cursor?: string;
  limit?: number;
  /** How the total is reported (count-mode.ts); the default is `estimated`. */
  count?: CountMode;
  /** The fields rows show (an applied view's `columns`); all fields when absent. */
  columns?: readonly FieldDefinition[] | null;
}

/** A page of rows with its total as the count mode reports it (see count-mode.ts). */
export interface RowPage<T> extends Omit<Page<T>, 'total' | 'totalPages'> {
  total: number | null;
  totalPages: number | null;
  /** True when `total` is an exact count; false for an estimate or no total. */
  totalExact: boolean;
  countMode: CountMode;
  /** Served read-only through a data-source reference (spec 2.3). */
  readOnly: boolean;
}

/** A cursor page of rows, marked like RowPage. */
export type RowCursorPage<T> = CursorPage<T> & { readOnly: boolean };

/**
 * Builds the page. The last page tells the exact total by itself (offset + its rows), which also corrects an
 * estimate there; an estimate is never below what the page shows exists. `more` says whether a row follows the
 * page (read as one row past it); without it only a page that is not full is known to be the last.
 */
export function rowPageOf<T>(
  items: T[],
  paging: { page: number; pageSize: number },
  mode: CountMode,
  counted: number | null,
  exact: boolean,
  readOnly: boolean,
  more?: boolean,
): RowPage<T> {
  const offset = (paging.page - 1) * paging.pageSize;
  if (mode === 'none' || counted === null) {
    return { items, page: paging.page, pageSize: paging.pageSize, total: null, totalPages: null, totalExact: false, countMode: mode, readOnly };
  }
  let total = counted;
  let totalExact = exact;
  const followed = more ?? items.length === paging.pageSize;
  if (!exact && !followed && (items.length > 0 || offset === 0)) {
    total = offset + items.length;
    totalExact = true;
  } else if (!exact) {
    total = Math.max(total, offset + items.length + (followed ? 1 : 0));
  }
  return { items, page: paging.page, pageSize: paging.pageSize, total, totalPages: Math.ceil(total / paging.pageSize), totalExact, countMode: mode, readOnly };
}

/**
 * A paging key of a JSON body: a JSON integer, as every body number (docs/errors.md). Strings used to be read with
 * `Number()`, so `"0x10"` paged by 16 and `"1e1"` by 10; a value of the wrong kind names the kind, not the bounds.
 */
function intIn(raw: unknown, field: string, min: number, max: number, errors: ErrorDetail[]): number | undefined {
  if (raw === undefined || raw === null) {
    return undefined;
  }
  if (typeof raw !== 'number' || !Number.isInteger(raw)) {
    errors.push({ field, reason: `${field} must be an integer number` });
    return undefined;
  }
  if (raw < min || raw > max) {
    errors.push({ field, reason: raw < min ? `${field} must not be less than ${min}` : `${field} must not be greater than ${max}` });
    return undefined;
  }
  return raw;
}

/** Paging keys of a query body. */
export function pagingOfBody(body: Record<string, unknown>): Paging {
  const errors: ErrorDetail[] = [];
  const page = intIn(body.page, 'page', 1, 1_000_000, errors) ?? 1;
  const pageSize = intIn(body.pageSize, 'pageSize', 1, MAX_PAGE_SIZE, errors) ?? DEFAULT_PAGE_SIZE;
  const limit = intIn(body.limit, 'limit', 1, MAX_CURSOR_LIMIT, errors);
  const count = body.count === undefined || body.count === null || (COUNT_MODES as readonly unknown[]).includes(body.count) ? (body.count as CountMode | undefined | null) : undefined;
  if (body.count !== undefined && body.count !== null && count === undefined) {
    errors.push({ field: 'count', reason: `must be one of ${COUNT_MODES.join(', ')}` });
  }
  if (body.cursor !== undefined && body.cursor !== null && typeof body.cursor !== 'string') {
    errors.push({ field: 'cursor', reason: 'must be a string' });
  }
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return { page, pageSize, limit, cursor: typeof body.cursor === 'string' ? body.cursor : undefined, ...(count ? { count } : {}) };
}

/**
 * Lists, queries and single rows, all executed by PostgreSQL through the query compiler (filters, sorts, groups,
 * aggregates, offset pages and keyset cursors), optionally over a request's draft.
 */
@Injectable()
export class RowQueryService {
  constructor(
    private readonly queries: RowQueryRepository,
    private readonly rows: RowRepository,
    private readonly drafts: DraftReadService,
    private readonly indexes: DocumentIndexService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly views: ViewResolver,
    private readonly computedAccess: ComputedAccessService,
    private readonly box: SecretBoxService,
  ) {}

  /**
   * Row cursors are sealed (AES-256-GCM, the service's encryption key): their keyset position ends with the row's
   * `seq`, one identity across every tenant, whose value would tell any reader how many rows the whole service has
   * written. Sealing also ties a cursor to the document's internal id, so a same-named document of another
   * workspace refuses it, and makes a cursor impossible to forge.
   */
  private sealCursor(ctx: DocumentContext, compiled: CompiledQuery, asOf: string, position: (string | null)[]): Promise<string> {
    return this.box.seal(
      encodeCursor(CURSOR_KIND, [`${ctx.document.uuid}:${compiled.sortSignature}${AS_OF_MARK}${asOf}`, ...cursorPositionForSeal(position)]),
    );
  }

  /** The position of an opened cursor, its long sort values (`{h}` references) read again from the row it names by `seq`. */
  private async cursorPosition(ctx: DocumentContext, draft: DraftView, compiled: CompiledQuery, position: unknown[]): Promise<unknown[]> {
    if (!position.some(isCursorKeyRef)) {
      return position;
    }
    const seq = position[position.length - 1];
    if (typeof seq !== 'string' || !/^\d{1,19}$/.test(seq)) {
      throw AppException.validation([{ field: 'cursor', reason: 'cursor does not match the sort' }]);
    }
    const row = await this.queries.sortKeysOf(ctx.document.uuid, compiled, seq, draft.overlay);
    return resolveCursorKeyRefs(position, compiled.sortKeys, row);
  }

  private async openCursor(cursor: string): Promise<unknown[]> {
    let plain: string;
    try {
      plain = await this.box.open(cursor);
    } catch {
      throw AppException.validation([{ field: 'cursor', reason: 'invalid cursor' }]);
    }
    return decodeCursor(CURSOR_KIND, plain);
  }

  /** The document or draft, without lookups (and formulas over them) reading documents the reader cannot read. */
  private async load(ctx: DocumentContext, requestId: string | undefined, rowIds?: string[]): Promise<DraftView> {
    return this.visible(ctx, await this.drafts.load(ctx.document, requestId, rowIds));
  }

  private async visible(ctx: DocumentContext, draft: DraftView): Promise<DraftView> {
    const fields = await this.computedAccess.visibleFields(ctx, draft.metadata.fields, draft.linked);
    return fields === draft.metadata.fields ? draft : { ...draft, metadata: { ...draft.metadata, fields } };
  }

  /** `GET /data`. */
  async list(
    ctx: DocumentContext,
    query: Omit<Paging, 'count'> & { sort?: string; requestId?: string; count?: string; viewId?: string },
    prefer?: string,
  ): Promise<RowPage<RowResponseDto> | RowCursorPage<RowResponseDto>> {
    const count = resolveCountMode(query.count, prefer);
    const draft = await this.load(ctx, query.requestId);
    const ast: QueryAst = { filter: null, sorts: parseSortParam(query.sort), groupBy: null };
    const view = await this.views.apply(ctx.document, draft.metadata.fields, ast, query.viewId);
    return this.run(ctx, draft, view.ast, { ...query, count, columns: view.columns });
  }

  /** `POST /data/query`: the structured or the short query form (spec 2.12). */
  async query(
    ctx: DocumentContext,
    body: unknown,
    requestId: string | undefined,
    prefer?: string,
    viewId?: string,
  ): Promise<RowPage<RowResponseDto> | RowCursorPage<RowResponseDto> | GroupedQueryResultDto> {
    if (!isPlainObject(body)) {
      throw AppException.validation([{ field: 'body', reason: 'query must be an object' }]);
    }
    // A misspelt key (`filterz`, `orderBy`) would silently query everything: refused like any unknown body field.
    const unknown = Object.keys(body).filter((key) => !QUERY_BODY_KEYS.has(key));
    if (unknown.length > 0) {
      throw AppException.validation(unknown.map((key) => ({ field: key, reason: `unknown key; a query takes ${[...QUERY_BODY_KEYS].join(', ')}` })));
    }
    const paging = { ...pagingOfBody(body), count: resolveCountMode(body.count, prefer) };
    const ast = normalizeQuery(body, { strict: true });
    const draft = await this.load(ctx, requestId);
    const view = await this.views.apply(ctx.document, draft.metadata.fields, ast, viewId);
    if (view.ast.groupBy) {
      return this.groups(ctx, draft, view.ast, paging);
    }
    return this.run(ctx, draft, view.ast, { ...paging, columns: view.columns });
  }

  /**
   * The first `limit` groups of a grouped query (`body` a query body with `groupBy`), in key order, read by one
   * statement: for in-process readers of a whole series (chart views), which are not bound to the 100 groups of an
   * HTTP page.
   */
  async firstGroups(ctx: DocumentContext, body: Record<string, unknown>, limit: number, requestId?: string, viewId?: string): Promise<GroupedQueryResultDto> {
    const draft = await this.load(ctx, requestId);
    const view = await this.views.apply(ctx.document, draft.metadata.fields, normalizeQuery(body), viewId);
    return this.groups(ctx, draft, view.ast, { page: 1, pageSize: limit });
  }

  /** One row, as the document or the draft has it. */
  /** Committed rows whose `fieldId` value, trimmed and lower-cased, is one of `keys` (RowRepository.findByTextKeys). */
  findByTextKeys(ctx: DocumentContext, fieldId: string, keys: readonly string[]): Promise<{ id: string; values: StoredRowValues }[]> {
    return this.rows.findByTextKeys(ctx.document.uuid, fieldId, keys);
  }

  async get(ctx: DocumentContext, rowId: string, requestId: string | undefined): Promise<RowReadResponseDto> {
    const draft = await this.load(ctx, requestId, [rowId]);
    const row = await this.findRow(ctx, draft, rowId);
    if (!row) {
      throw rowNotFound(rowId);
    }
    return { ...toRowDto(row, draft.metadata.fields), readOnly: ctx.readOnly };
  }

  async findRow(ctx: DocumentContext, draft: DraftView, rowId: string): Promise<RowRecord | null> {
    if (!draft.overlay) {
      return ctx.prefetched?.rowId === rowId ? ctx.prefetched.row : this.rows.find(ctx.document.uuid, rowId);
    }
    const ast: QueryAst = {
      filter: { kind: 'condition', field: 'id', operator: 'eq', value: rowId, path: 'rowId', operatorKey: 'operator' },
      sorts: [],
      groupBy: null,
    };
    const compiled = this.compile(ast, draft);
    const rows = await this.queries.page(ctx.document.uuid, compiled, { limit: 1, offset: 0 }, draft.overlay);
    return rows[0] ?? null;
  }

  /** A page of rows for the document bundle. */
  async page(ctx: DocumentContext, given: DraftView, paging: { page: number; pageSize: number; count?: CountMode; viewId?: string }): Promise<RowPage<RowResponseDto>> {
    const draft = await this.visible(ctx, given);
    const view = await this.views.apply(ctx.document, draft.metadata.fields, { filter: null, sorts: [], groupBy: null }, paging.viewId);
    return this.run(ctx, draft, view.ast, { ...paging, columns: view.columns }) as Promise<RowPage<RowResponseDto>>;
  }

  private compile(ast: QueryAst, draft: DraftView, after?: unknown, asOf?: string): CompiledQuery {
    return compileAst(ast, draft.metadata.fields, { paramOffset: RowQueryRepository.paramOffset(draft.overlay), after, asOf });
  }

  private async run(ctx: DocumentContext, draft: DraftView, ast: QueryAst, paging: Paging): Promise<RowPage<RowResponseDto> | RowCursorPage<RowResponseDto>> {
    const fields = draft.metadata.fields;
    const shown = paging.columns ?? fields;
    const uuid = ctx.document.uuid;
    this.indexes.noteQuery(ctx.document, fields, ast);
    if (paging.cursor !== undefined || paging.limit !== undefined) {
      const limit = paging.limit ?? DEFAULT_CURSOR_LIMIT;
      // NOW()/TODAY() formulas are evaluated at the instant of the walk's first page, carried by its cursors: a sort
      // by such a formula moved under the cursor between pages (`now:asc` repeated the first rows on every page).
      let asOf = new Date().toISOString();
      let opened: { signature: unknown; position: unknown[] } | null = null;
      if (paging.cursor) {
        const [signature, ...position] = await this.openCursor(paging.cursor);
        opened = { signature, position };
        const mark = typeof signature === 'string' ? signature.indexOf(AS_OF_MARK) : -1;
        if (mark >= 0) {
          asOf = (signature as string).slice(mark + AS_OF_MARK.length);
          opened.signature = (signature as string).slice(0, mark);
          if (!isInstant(asOf)) {
            throw AppException.validation([{ field: 'cursor', reason: 'invalid cursor' }]);
          }
        }
      }
      const probe = this.compile(ast, draft, undefined, asOf);
      let after: unknown;
      if (opened) {
        if (opened.signature !== `${ctx.document.uuid}:${probe.sortSignature}`) {
          throw AppException.validation([{ field: 'cursor', reason: 'cursor belongs to another document or sort' }]);
        }
        after = await this.cursorPosition(ctx, draft, probe, opened.position);
      }
      const compiled = after === undefined ? probe : this.compile(ast, draft, after, asOf);
      const rows = await this.queries.cursorPage(uuid, compiled, limit + 1, draft.overlay);
      const items = rows.slice(0, limit);
      const last = items[items.length - 1];
      const nextCursor =
        rows.length > limit && last?.cursor ? await this.sealCursor(ctx, compiled, asOf, cursorPositionFromRow(last.cursor, compiled.sortKeys)) : null;
      return { items: items.map((row) => toRowDto(row, shown)), limit, nextCursor, readOnly: ctx.readOnly };
    }
    const compiled = this.compile(ast, draft);
    const offset = (paging.page - 1) * paging.pageSize;
    const mode = paging.count ?? DEFAULT_COUNT_MODE;
    const unfiltered = compiled.where === 'TRUE' && !draft.overlay;
    const exact = mode === 'exact' || (mode === 'estimated' && (unfiltered || ctx.document.rowCount <= this.config.query.exactCountMaxRows));
    const total = (): Promise<number | null> =>
      mode === 'none'
        ? Promise.resolve(null)
        : unfiltered && exact
          ? Promise.resolve(ctx.document.rowCount)
          : exact
            ? this.queries.count(uuid, compiled, draft.overlay)
            : this.queries.estimate(uuid, compiled, draft.overlay);
    // An estimated total reads one row past the page: a full last page then knows it is the last and answers the
    // exact total, instead of an estimate promising one more (empty) page.
    const probeNext = mode !== 'none' && !exact;
    const page = (): Promise<RowRecord[]> =>
      this.queries.page(uuid, compiled, { limit: paging.pageSize + (probeNext ? 1 : 0), offset }, draft.overlay);
    // Outside a transaction the page and its total run on two pooled connections at once; inside one (the bundle's
    // snapshot) they share its connection, which takes one statement at a time.
    const [rows, estimated] = this.queries.inTransaction ? [await page(), await total()] : await Promise.all([page(), total()]);
    // An empty page past the first tells nothing of the total, and an estimate kept "never below the page" answered
    // the offset itself (page 50 of 100 matching rows: total 980, 49 pages): such a page counts exactly, as a
    // grouped page past the last group does.
    const pastEnd = mode !== 'none' && !exact && rows.length === 0 && offset > 0;
    const counted = pastEnd ? await this.queries.count(uuid, compiled, draft.overlay) : estimated;
    const items = rows.slice(0, paging.pageSize).map((row) => toRowDto(row, shown));
    return rowPageOf(items, paging, mode, counted, exact || pastEnd, ctx.readOnly, probeNext ? rows.length > paging.pageSize : undefined);
  }

  /** A page of groups (page/pageSize as for rows, in the order of the group keys) with the number of groups. */
  private async groups(ctx: DocumentContext, draft: DraftView, ast: QueryAst, paging: Paging): Promise<GroupedQueryResultDto> {
    if (paging.cursor !== undefined || paging.limit !== undefined) {
      throw AppException.validation([{ field: paging.cursor === undefined ? 'limit' : 'cursor', reason: 'groups are paged with page and pageSize' }]);
    }
    const compiled = this.compile(ast, draft);
    const group = compiled.groupBy;
    const { page, pageSize } = paging;
    if (!group) {
      return { groups: [], page, pageSize, total: 0, totalPages: 0, readOnly: ctx.readOnly };
    }
    const { rows, total } = await this.queries.groups(ctx.document.uuid, compiled, { limit: pageSize, offset: (page - 1) * pageSize }, draft.overlay);
    const byId = new Map<string, FieldDefinition>(draft.metadata.fields.map((field) => [field.id, field]));
    const definitionOf = (fieldId: string): FieldDefinition | undefined => byId.get(fieldId) ?? SYSTEM_QUERY_FIELDS[fieldId]?.definition;
    return {
      groups: rows.map((row) => ({
        keys: group.keys.flatMap((key) => {
          const definition = definitionOf(key.field);
          const stored = row[key.alias] as StoredValue | undefined;
          const value = definition && stored !== null && stored !== undefined ? safeValue(stored, definition) : null;
          return value === null ? [] : [{ fieldId: key.field, value }];
        }),
        aggregations: group.aggregates.map((aggregate) => ({
          kind: aggregate.kind,
          ...(aggregate.field === undefined ? {} : { field: aggregate.field }),
          value: row[aggregate.alias] ?? null,
        })),
      })),
      page,
      pageSize,
      total,
      totalPages: Math.ceil(total / pageSize),
      readOnly: ctx.readOnly,
    };
  }
}

function safeValue(stored: StoredValue, definition: FieldDefinition): ReturnType<typeof storedToValue> {
  try {
    return storedToValue(stored, definition);
  } catch {
    return null;
  }
}
