import { Injectable } from '@nestjs/common';
import type { StoredRowValues, SystemColumn } from '../../documents/fields/field.types.js';
import { handlerFor } from '../../documents/fields/field-type.registry.js';
import { ChangeEngineService } from '../../documents/services/change-engine.service.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { RevisionHistoryService } from '../../documents/services/revision-history.service.js';
import { RevisionsService } from '../../documents/services/revisions.service.js';
import { RowQueryService } from '../../documents/services/row-query.service.js';
import type { SourceRowChange } from '../domain/row-changes.js';
import { plainReader } from './row-reader.js';
import { optionIdsOf } from './sync-document.gateway.js';

export interface RowState {
  exists: boolean;
  values: StoredRowValues;
  baseVersion: number | null;
}

/** A row's system columns as the row API answers them. */
interface RowColumns {
  createdAt?: string | null;
  createdBy?: string | null;
  updatedAt?: string | null;
  updatedBy?: string | null;
}

/** Where each system column's value is in a rendered row. */
const SYSTEM_COLUMN_KEYS: Record<SystemColumn, keyof RowColumns | null> = {
  'r.created_at': 'createdAt',
  'r.created_by': 'createdBy',
  'r.updated_at': 'updatedAt',
  'r.updated_by': 'updatedBy',
  'r.id': null,
  'r.version': null,
};

/** Revisions whose row changes are kept in memory. */
const RECENT_REVISIONS = 8;

/**
 * What the sync reads of documents, through the documents module's exported services: a revision's row changes,
 * rows by id (with the values their system-column fields show, locked if asked), row-id pages, the head revision and
 * deduplication candidates. Opening the documents and writing to them is SyncDocumentGateway's
 * (sync-document.gateway.ts).
 */
@Injectable()
export class SyncDocumentReadGateway {
  private readonly recentChanges = new Map<string, SourceRowChange[]>();

  constructor(
    private readonly engine: ChangeEngineService,
    private readonly revisions: RevisionsService,
    private readonly rowQueries: RowQueryService,
    private readonly history: RevisionHistoryService,
  ) {}

  /**
   * The rows a revision created, updated (with the fields it changed) and deleted (with their last values). Revisions
   * are immutable, so the answer is kept for the next bindings of the same revision (a few recent revisions).
   */
  async rowChanges(ctx: DocumentContext, revisionId: string): Promise<SourceRowChange[]> {
    const key = `${ctx.document.uuid}:${revisionId}`;
    const cached = this.recentChanges.get(key);
    if (cached) {
      return cached;
    }
    const changes = await this.readRowChanges(ctx, revisionId);
    this.recentChanges.set(key, changes);
    if (this.recentChanges.size > RECENT_REVISIONS) {
      this.recentChanges.delete(this.recentChanges.keys().next().value as string);
    }
    return changes;
  }

  private async readRowChanges(ctx: DocumentContext, revisionId: string): Promise<SourceRowChange[]> {
    const page = await this.revisions.operations(ctx, revisionId, { page: 1, pageSize: 1_000_000 });
    const changes: SourceRowChange[] = [];
    for (const op of page.items) {
      const rowId = op.target.rowId;
      if (!rowId) {
        continue;
      }
      if (op.type === 'row-create') {
        changes.push({ rowId, kind: 'created', fieldIds: [] });
      } else if (op.type === 'row-update') {
        changes.push({ rowId, kind: 'updated', fieldIds: fieldIdsOf(op.newValue) });
      } else if (op.type === 'row-delete') {
        changes.push({ rowId, kind: 'deleted', fieldIds: [], oldValues: storedEntries(op.oldValue) });
      }
    }
    return changes;
  }

  /**
   * Stored rows by id as the document has them (`lock`: held until the transaction ends). Fields read from the row's
   * columns (created_time, updated_time, created_by, updated_by) are in `values` too, in their stored form (ISO
   * time, user id): a catalog row's values are everything its fields show, what mappings and filters read.
   */
  async rows(ctx: DocumentContext, rowIds: readonly string[], lock = false): Promise<Map<string, RowState>> {
    if (rowIds.length === 0) {
      return new Map();
    }
    const states = await this.engine.scope(ctx.document, null, lock).rows(rowIds);
    const result = new Map<string, RowState>(
      [...states].map(([id, state]) => [
        id,
        { exists: state.exists, values: state.values, baseVersion: state.baseVersion },
      ]),
    );
    const stamped = ctx.document.metadata.fields.flatMap((field) => {
      const column = handlerFor(field.type).systemColumn;
      return column ? [{ fieldId: field.id, key: SYSTEM_COLUMN_KEYS[column] }] : [];
    });
    if (stamped.length > 0) {
      const existing = [...result].filter(([, state]) => state.exists).map(([id]) => id);
      for (const [id, columns] of await this.rowColumns(ctx, existing)) {
        const state = result.get(id) as RowState;
        const values: StoredRowValues = { ...state.values };
        for (const { fieldId, key } of stamped) {
          const value = key ? columns[key] : null;
          if (value !== null && value !== undefined) {
            values[fieldId] = value;
          }
        }
        result.set(id, { ...state, values });
      }
    }
    return result;
  }

  /** The created/updated time and user of rows (as the API renders them), for the fields that show them. */
  private async rowColumns(
    ctx: DocumentContext,
    rowIds: readonly string[],
  ): Promise<Map<string, RowColumns>> {
    const found = new Map<string, RowColumns>();
    // A document field with the id `id` would take the row id's place in a query: then the rows are read one by one.
    if (ctx.document.metadata.fields.some((field) => field.id === 'id')) {
      for (const rowId of rowIds) {
        const row = await this.rowQueries.get(ctx, rowId, undefined).catch(() => null);
        if (row) {
          found.set(rowId, row);
        }
      }
      return found;
    }
    for (let start = 0; start < rowIds.length; start += 1000) {
      const chunk = rowIds.slice(start, start + 1000);
      const page = (await this.rowQueries.query(
        ctx,
        {
          limit: chunk.length,
          filters: { logic: 'and', conditions: [{ field: 'id', operator: 'in', value: chunk }] },
        },
        undefined,
      )) as { items?: (RowColumns & { id: string })[] };
      for (const row of page.items ?? []) {
        found.set(row.id, row);
      }
    }
    return found;
  }

  /**
   * When a field of a row was last changed (for `latest_wins`): the newest operation of the document's history that
   * wrote it — the row's time would make an older edit of this field look newer than it is after an edit of another.
   */
  async fieldUpdatedAt(ctx: DocumentContext, rowId: string, fieldId: string): Promise<Date | null> {
    const page = await this.history.targetHistory(ctx, { targetKind: 'row', rowId, fieldId, page: 1, pageSize: 1 });
    const newest = page.items[0];
    return newest ? new Date(newest.timestamp) : null;
  }

  /** Every row of a query (cursor pages of 1000), rendered as the API answers. */
  private async queryAll(
    ctx: DocumentContext,
    filters: unknown,
  ): Promise<{ id: string; values: { fieldId: string; value: unknown }[] }[]> {
    const rows: { id: string; values: { fieldId: string; value: unknown }[] }[] = [];
    let cursor: string | undefined;
    do {
      const body: Record<string, unknown> = {
        limit: 1000,
        ...(filters ? { filters } : {}),
        ...(cursor ? { cursor } : {}),
      };
      const result = await this.rowQueries.query(ctx, body, undefined);
      const page = result as {
        items?: { id: string; values: { fieldId: string; value: unknown }[] }[];
        nextCursor?: string | null;
      };
      rows.push(...(page.items ?? []));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return rows;
  }

  /** The document's newest revision (null before its first merge): where an initial sync reads the rows. */
  async headRevision(ctx: DocumentContext): Promise<{ id: string; version: number; createdAt: Date } | null> {
    const head = (await this.revisions.list(ctx, { page: 1, pageSize: 1 })).items[0];
    return head ? { id: head.id, version: head.version, createdAt: new Date(head.createdAt) } : null;
  }

  /** Whether the document holds any row (one row read). */
  async hasRows(ctx: DocumentContext): Promise<boolean> {
    const page = (await this.rowQueries.query(ctx, { limit: 1 }, undefined)) as { items?: unknown[] };
    return (page.items?.length ?? 0) > 0;
  }

  /**
   * One keyset page of the document's row ids (`cursor`: the previous page's `nextCursor`, null for the first): a
   * propagation reconcile walks the catalog `limit` rows at a time.
   */
  async rowIdPage(
    ctx: DocumentContext,
    cursor: string | null,
    limit: number,
  ): Promise<{ ids: string[]; nextCursor: string | null }> {
    const page = (await this.rowQueries.query(ctx, { limit, ...(cursor ? { cursor } : {}) }, undefined)) as {
      items?: { id: string }[];
      nextCursor?: string | null;
    };
    return { ids: (page.items ?? []).map((row) => row.id), nextCursor: page.nextCursor ?? null };
  }

  /** Every row id of the document (a scheduled connector run reconciles them all). */
  async allRowIds(ctx: DocumentContext): Promise<string[]> {
    return (await this.queryAll(ctx, null)).map((row) => row.id);
  }

  /**
   * Rows of the document whose `fieldId` holds one of `values` (plain form) — text compared trimmed and
   * case-insensitively, as deduplication compares (sync-rules.ts `dedupKey`) — with the plain values of `fieldIds`:
   * the candidates of a deduplication match, found in SQL (RowQueryService.findByTextKeys), oldest row first.
   */
  async findByValues(
    ctx: DocumentContext,
    fieldId: string,
    values: readonly unknown[],
    fieldIds: readonly string[],
  ): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    const fields = ctx.document.metadata.fields;
    // Rows hold stored values: select labels become option ids first.
    const field = fields.find((item) => item.id === fieldId);
    const keys = [
      ...new Set(
        values
          .map((value) => (field ? optionIdsOf(field, value) : value))
          .filter((value) => ['string', 'number', 'boolean'].includes(typeof value))
          .map((value) => String(value).trim().toLowerCase())
          .filter((key) => key !== ''),
      ),
    ];
    const read = plainReader(fields);
    for (let start = 0; start < keys.length; start += 1000) {
      for (const row of await this.rowQueries.findByTextKeys(ctx, fieldId, keys.slice(start, start + 1000))) {
        const plain = read(row.values);
        found.set(row.id, Object.fromEntries(fieldIds.map((id) => [id, plain(id)])));
      }
    }
    return found;
  }
}

function fieldIdsOf(value: unknown): string[] {
  if (!value || typeof value !== 'object') {
    return [];
  }
  const values = (value as { values?: unknown }).values;
  if (Array.isArray(values)) {
    return values
      .map((entry) => (entry as { fieldId?: string }).fieldId)
      .filter((id): id is string => typeof id === 'string');
  }
  return values && typeof values === 'object' ? Object.keys(values) : [];
}

/**
 * A deleted row's last values (rendered ValueEntries) in the stored form a row reader reads (plainReader): selects
 * as option ids — the reader shows their labels, and filters compare option ids — other values plain.
 */
function storedEntries(value: unknown): Record<string, unknown> {
  const values = value && typeof value === 'object' ? (value as { values?: unknown }).values : undefined;
  const stored: Record<string, unknown> = {};
  if (Array.isArray(values)) {
    for (const entry of values as { fieldId?: string; value?: unknown }[]) {
      if (entry.fieldId) {
        stored[entry.fieldId] = storedOfValue(entry.value);
      }
    }
  }
  return stored;
}

function storedOfValue(value: unknown): unknown {
  const object =
    value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (object?.selectOption && typeof object.selectOption === 'object') {
    return (object.selectOption as { id?: string }).id ?? null;
  }
  if (Array.isArray(object?.multiSelect)) {
    return (object.multiSelect as { id?: string }[]).map((option) => option.id);
  }
  return plainOfValue(value);
}

/** A rendered Value (docs/values.md) back to a plain value: `{number: 1}` → 1, a select → its label. */
export function plainOfValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return value;
  }
  const object = value as Record<string, unknown>;
  if (object.selectOption && typeof object.selectOption === 'object') {
    const option = object.selectOption as { id?: string; label?: string };
    return option.label ?? option.id ?? null;
  }
  if (Array.isArray(object.multiSelect)) {
    return (object.multiSelect as { id?: string; label?: string }[]).map(
      (option) => option.label ?? option.id,
    );
  }
  const keys = Object.keys(object);
  return keys.length === 1 ? object[keys[0] as string] : value;
}
