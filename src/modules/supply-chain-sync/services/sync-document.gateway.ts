import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SCOPES, type Principal } from '../../../common/auth/principal.js';
import type { ChangeDraft } from '../../documents/domain/document.records.js';
import type { FieldDefinition, StoredRowValues, SystemColumn } from '../../documents/fields/field.types.js';
import { handlerFor, parseRowValues } from '../../documents/fields/field-type.registry.js';
import { validateFieldDefinitions } from '../../documents/fields/field-definition.validator.js';
import { buildMetadataUpdate } from '../../documents/services/change-builders.js';
import { ChangeEngineService, type WriteOutcome } from '../../documents/services/change-engine.service.js';
import {
  type DocumentContext,
  DocumentAccessService,
} from '../../documents/services/document-access.service.js';
import { RevisionsService } from '../../documents/services/revisions.service.js';
import { RowQueryService } from '../../documents/services/row-query.service.js';
import { alignGeneratedFields, type GeneratedSource } from '../domain/generated-fields.js';
import type { SourceRowChange } from '../domain/row-changes.js';
import { plainReader } from './row-reader.js';

export interface RowState {
  exists: boolean;
  values: StoredRowValues;
  baseVersion: number | null;
}

export interface RowWrite {
  kind: 'create' | 'update' | 'delete';
  rowId: string;
  /** Plain values by field id (select labels are matched to options). */
  values: Record<string, unknown>;
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

/** Marks a write's request: the sync writes with this title prefix so people see where a request came from. */
export const SYNC_TITLE_PREFIX = '[sync]';

/**
 * Everything the sync does with documents, through the documents module's exported services: opening catalogs,
 * order books and connector targets as server-side work for their organization, reading a revision's row changes and
 * rows, and writing rows through the change engine (a request merged at once, or an open request).
 */
@Injectable()
export class SyncDocumentGateway {
  private readonly recentChanges = new Map<string, SourceRowChange[]>();

  constructor(
    private readonly access: DocumentAccessService,
    private readonly engine: ChangeEngineService,
    private readonly revisions: RevisionsService,
    private readonly rowQueries: RowQueryService,
  ) {}

  principalOf(userId: string): Principal {
    return { userId, kind: 'session', scopes: [...SCOPES] };
  }

  open(
    organizationId: string,
    docType: string,
    docId: string,
    actingUserId: string,
  ): Promise<DocumentContext | null> {
    return this.access.openOrganizationDocumentAsSystem(
      this.principalOf(actingUserId),
      organizationId,
      docType,
      docId,
    );
  }

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

  /** When a row was last changed (for `latest_wins`). */
  async rowUpdatedAt(ctx: DocumentContext, rowId: string): Promise<Date | null> {
    try {
      return new Date((await this.rowQueries.get(ctx, rowId, undefined)).updatedAt);
    } catch {
      return null;
    }
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

  /**
   * Stored values of `values` for the document's fields: select labels are matched to option ids, computed and unknown
   * fields are left out. Throws a validation error (AppException with details) when a value does not fit.
   */
  toStored(
    fields: readonly FieldDefinition[],
    values: Record<string, unknown>,
    partial = true,
  ): StoredRowValues {
    const byId = new Map(fields.map((field) => [field.id, field]));
    const input: Record<string, unknown> = {};
    for (const [fieldId, value] of Object.entries(values)) {
      const field = byId.get(fieldId);
      if (!field || handlerFor(field.type).computed) {
        continue;
      }
      input[fieldId] = optionIdsOf(field, value);
    }
    return parseRowValues(input as never, [...fields], { partial });
  }

  /**
   * Brings an order book's generated fields in step with its catalog's fields (domain/generated-fields.ts: new select
   * options, renamed labels) as one metadata change merged at once, titled like the propagation's row writes. Nothing
   * when already in step, or when the order book's workflow requires approval (its metadata stays the buyer's to
   * change; values that do not fit are left out, binding-plan). Definitions that would not validate are not written
   * (null); the caller records where the merged revision came from.
   */
  async alignGeneratedFields(
    ctx: DocumentContext,
    catalogFields: readonly FieldDefinition[],
    generated: readonly GeneratedSource[],
    title: string,
  ): Promise<WriteOutcome | null> {
    if (ctx.document.settings.workflow?.requiresApproval === true) {
      return null;
    }
    const planned = alignGeneratedFields(ctx.document.metadata.fields, catalogFields, generated);
    if (!planned) {
      return null;
    }
    try {
      validateFieldDefinitions(planned);
    } catch {
      return null;
    }
    const outcome = await this.engine.write(ctx, { title }, async (scope) => {
      // The metadata as the locked document has it now: another change may have come first.
      const fields = alignGeneratedFields((await scope.metadata()).fields, catalogFields, generated);
      const change = fields
        ? await buildMetadataUpdate(scope, { fields }, () => Promise.resolve(false))
        : null;
      return change ? [change] : [];
    });
    return outcome.merge ? outcome : null;
  }

  /**
   * Writes rows. `pending` false: one request merged at once (unless the document's workflow requires approval);
   * true: an open request for the buyer to accept. Creates of rows that exist become updates, updates and deletes of
   * rows that are gone are dropped (the caller logged the decision already) — except a pending delete, which the
   * caller plans for a row not there yet only when its create waits in a pending request.
   */
  async write(
    ctx: DocumentContext,
    writes: readonly RowWrite[],
    opts: { title: string; description: string; pending: boolean },
  ): Promise<WriteOutcome | null> {
    if (writes.length === 0) {
      return null;
    }
    const fields = ctx.document.metadata.fields;
    const bulkId = randomUUID();
    const outcome = await this.engine.write(
      ctx,
      opts.pending
        ? {
            title: opts.title,
            newRequest: { title: opts.title, description: opts.description, reviewers: [] },
          }
        : { title: opts.title, rowsOnly: true },
      async (scope) => {
        const states = await scope.rows(writes.map((write) => write.rowId));
        const drafts: ChangeDraft[] = [];
        // One bulk id: the merge reports one data_bulk_operation, not one event per row.
        const origin = { bulkId };
        for (const write of writes) {
          const state = states.get(write.rowId);
          if (write.kind === 'delete') {
            if (state?.exists) {
              drafts.push({
                type: 'row-delete',
                operation: 'delete',
                targetId: write.rowId,
                data: { baseVersion: state.baseVersion, origin },
              });
            } else if (opts.pending) {
              // A proposed deletion of a row whose create still waits in another pending request (binding-plan:
              // PENDING_CREATE): without a base version, it deletes the row once the buyer accepted the create.
              drafts.push({
                type: 'row-delete',
                operation: 'delete',
                targetId: write.rowId,
                data: { baseVersion: null, origin },
              });
            }
            continue;
          }
          if (write.kind === 'create' && !state?.exists) {
            drafts.push({
              type: 'row-create',
              operation: 'create',
              targetId: write.rowId,
              data: { values: this.toStored(fields, write.values, false), origin },
            });
            continue;
          }
          if (state?.exists) {
            drafts.push({
              type: 'row-update',
              operation: 'update',
              targetId: write.rowId,
              data: {
                values: this.toStored(fields, write.values, true),
                baseVersion: state.baseVersion,
                origin,
              },
            });
          }
        }
        scope.push(...drafts);
        return drafts;
      },
    );
    return outcome;
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

/** A select option given by label (or id) → its id; other fields unchanged. */
function optionIdsOf(field: FieldDefinition, value: unknown): unknown {
  if (
    (field.type !== 'single_select' && field.type !== 'multi_select') ||
    value === null ||
    value === undefined
  ) {
    return value;
  }
  const options = field.selectOptions ?? [];
  const find = (item: unknown): unknown => {
    const text = String(item);
    const byId = options.find((option) => option.id === text);
    if (byId) {
      return byId.id;
    }
    const lower = text.trim().toLowerCase();
    const byLabel = options.find(
      (option) =>
        option.label?.toLowerCase() === lower ||
        Object.values(option.name ?? {}).some((name) => name.toLowerCase() === lower),
    );
    return byLabel?.id ?? item;
  };
  if (field.type === 'multi_select') {
    return (Array.isArray(value) ? value : [value]).map(find);
  }
  return find(Array.isArray(value) ? value[0] : value);
}
