import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { mapPgError } from '../../../common/errors/pg-error.mapper.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { RequestsService } from '../../documents/services/requests.service.js';
import { RowsService } from '../../documents/services/rows.service.js';
import { ChangeEngineService } from '../../documents/services/change-engine.service.js';
import type { CreateRequestDto } from '../../documents/dtos/request.dto.js';
import type { BatchUpdateResultDto } from '../dtos/catalog.dto.js';
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE } from '../../../common/http/client-ids.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';

export const MAX_BATCH_ROWS = 1000;

/** A row operation once upserts are resolved. */
export type ResolvedRowOp = RowOp & { operation: 'create' | 'update' | 'delete' };

export interface RowOp {
  /** `upsert`: a row named by id without an `operation` — updated when it exists, else created with that id. */
  operation: 'create' | 'update' | 'delete' | 'upsert';
  rowId: string;
  /** ValueEntry array (objects of field id → Value are converted). */
  values: Array<{ fieldId: string; value: unknown }>;
  path: string;
  /** The client sent `values` as an object of field id → Value: errors name `values.{fieldId}`, not an index. */
  valuesByField?: boolean;
}

/** ValueEntry array from either form; null when the shape is neither. */
export function valueEntries(values: unknown): Array<{ fieldId: string; value: unknown }> | null {
  if (values === undefined || values === null) {
    return [];
  }
  if (Array.isArray(values)) {
    return values.every((entry) => isPlainObject(entry) && typeof entry.fieldId === 'string')
      ? (values as Array<{ fieldId: string; value: unknown }>)
      : null;
  }
  if (isPlainObject(values)) {
    return Object.entries(values).map(([fieldId, value]) => ({ fieldId, value }));
  }
  return null;
}

/** Keys a batch row may carry; `metadata` (spec 4.4's order-book form) is accepted and not stored. */
const ROW_KEYS = new Set(['target', 'values', 'metadata', 'operation', 'id', 'rowId']);

/**
 * Keys of a row that the batch refuses by name rather than dropping silently (a row in another shape would
 * otherwise change nothing and still answer 200): `{target: {row, field}, value}` is the `/doc` bulk form, and a
 * per-row `version` is not checked by the batch write (docs/supply-chain.md, "Catalogs and order books").
 */
function unknownKeyReason(key: string): string {
  if (key === 'version') {
    return 'a per-row version is not supported by batch-update; update the row alone (PUT /doc/{docType}/{docId}/data/{rowId} with version)';
  }
  if (key === 'value') {
    return 'unknown key value: batch rows carry values (an array of {fieldId, value} or an object of field id to Value)';
  }
  return `unknown key ${key}: a row is {target: {row}, values, metadata?, operation?} or {id, values}`;
}

/**
 * Parses the batch forms: `{target: {row}, values, metadata?, operation?}` (the order-book form of spec 4.4) or
 * `{id, values}`. A row with a target is updated, one without is created (id generated), `operation: delete`
 * deletes. Unknown keys (of the row or its target) are refused with their path. At most 1000 rows; every problem
 * is reported at once.
 */
export function parseBatchRows(rows: unknown, path = 'rows'): RowOp[] {
  const errors: ErrorDetail[] = [];
  if (!Array.isArray(rows) || rows.length === 0 || rows.length > MAX_BATCH_ROWS) {
    throw AppException.validation([
      { field: path, reason: `${path} must be an array of 1 to ${MAX_BATCH_ROWS} rows` },
    ]);
  }
  const ops: RowOp[] = [];
  const seen = new Set<string>();
  rows.forEach((raw: unknown, index) => {
    const at = `${path}[${index}]`;
    if (!isPlainObject(raw)) {
      errors.push({ field: at, reason: 'each row must be an object {target: {row}, values}' });
      return;
    }
    const unknown = Object.keys(raw).filter((key) => !ROW_KEYS.has(key));
    const target = raw.target;
    if (target !== undefined && !isPlainObject(target)) {
      errors.push({ field: `${at}.target`, reason: 'target must be an object {row}' });
      return;
    }
    const unknownInTarget = isPlainObject(target) ? Object.keys(target).filter((key) => key !== 'row') : [];
    if (unknown.length > 0 || unknownInTarget.length > 0) {
      errors.push(
        ...unknown.map((key) => ({ field: `${at}.${key}`, reason: unknownKeyReason(key) })),
        ...unknownInTarget.map((key) => ({
          field: `${at}.target.${key}`,
          reason: `unknown key ${key}: a batch target is {row}`,
        })),
      );
      return;
    }
    if (raw.metadata !== undefined && raw.metadata !== null && !isPlainObject(raw.metadata)) {
      // Not stored, but typed: `metadata: "x"` used to pass without a word.
      errors.push({ field: `${at}.metadata`, reason: 'metadata must be an object' });
      return;
    }
    const given = (isPlainObject(target) ? target.row : undefined) ?? raw.id ?? raw.rowId;
    if (given !== undefined && (typeof given !== 'string' || !CLIENT_ID_PATTERN.test(given))) {
      errors.push({ field: `${at}.target.row`, reason: `row id ${CLIENT_ID_RULE}` });
      return;
    }
    // A named row without an operation is written whether or not it exists yet: "batch-update" is the only spec
    // route that adds catalog rows (spec 4.8), and its natural body names the rows it writes.
    const operationRaw = raw.operation ?? (given === undefined ? 'create' : 'upsert');
    if (raw.operation !== undefined && operationRaw !== 'create' && operationRaw !== 'update' && operationRaw !== 'delete') {
      errors.push({ field: `${at}.operation`, reason: 'operation must be one of create, update, delete' });
      return;
    }
    if ((operationRaw === 'update' || operationRaw === 'delete') && given === undefined) {
      errors.push({ field: `${at}.target.row`, reason: `${operationRaw} needs target.row` });
      return;
    }
    const values = valueEntries(raw.values);
    if (values === null) {
      errors.push({
        field: `${at}.values`,
        reason: 'values must be an array of {fieldId, value} or an object of field id to Value',
      });
      return;
    }
    const rowId = (given as string | undefined) ?? randomUUID();
    if (seen.has(rowId)) {
      errors.push({ field: `${at}.target.row`, reason: `row ${rowId} appears twice` });
      return;
    }
    seen.add(rowId);
    ops.push({
      operation: operationRaw as RowOp['operation'],
      rowId,
      values,
      path: at,
      ...(isPlainObject(raw.values) ? { valuesByField: true } : {}),
    });
  });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return ops;
}

/**
 * Writes to catalog and order-book documents, only through the documents module's services. A batch without
 * `requestId` becomes one request (one Change per row) merged at once: one revision, all or nothing. With
 * `requestId` the changes are appended to that open request.
 */
@Injectable()
export class DocumentWritesService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly requests: RequestsService,
    private readonly rows: RowsService,
    private readonly engine: ChangeEngineService,
  ) {}

  async batch(
    ctx: DocumentContext,
    ops: RowOp[],
    requestId: string | undefined,
    title: string,
    description?: string,
  ): Promise<BatchUpdateResultDto> {
    const retryable = !this.tx.inTransaction && ops.some((op) => op.operation === 'upsert');
    try {
      return await this.batchOnce(ctx, ops, requestId, title, description);
    } catch (error) {
      // An upsert resolved to a create while another write created that row: the INSERT fails with ALREADY_EXISTS.
      // Run the batch once more (its own transaction rolled back); the upsert now finds the row and updates it, as it
      // would have had it come second. Not inside a caller's transaction, which the failure has aborted.
      const known = error instanceof AppException ? error : mapPgError(error);
      if (retryable && known?.code === ErrorCode.ALREADY_EXISTS) {
        return this.batchOnce(ctx, ops, requestId, title, description);
      }
      throw error;
    }
  }

  private async batchOnce(
    ctx: DocumentContext,
    ops: RowOp[],
    requestId: string | undefined,
    title: string,
    description?: string,
  ): Promise<BatchUpdateResultDto> {
    return this.tx.run(async () => {
      const resolved = await this.resolveUpserts(ctx, ops, requestId);
      const counts = {
        rowsCreated: resolved.filter((op) => op.operation === 'create').length,
        rowsUpdated: resolved.filter((op) => op.operation === 'update').length,
        rowsDeleted: resolved.filter((op) => op.operation === 'delete').length,
        rowIds: resolved.map((op) => op.rowId),
      };
      if (requestId) {
        // One write appending every row change, tagged as one bulk: merged, one data_bulk_operation event.
        await this.rows.batch(ctx, resolved, { requestId }).catch((error: unknown) => {
          throw nameValuePaths(error, resolved);
        });
        return { requestId, merged: false, revisionId: null, ...counts };
      }
      if (ctx.document.settings.workflow?.requiresApproval === true) {
        // Stays open for the approval: an explicit request, which keeps the description.
        const request = await this.openRequest(ctx, resolved, title, description);
        return { requestId: request, merged: false, revisionId: null, ...counts };
      }
      // Merged at once through the change engine's rows-only write, as `/doc/…/data/bulk`: rows locked in id order,
      // the document row only when the revision is numbered. Creating a request and then merging it in this
      // transaction deadlocked concurrent batches of one document (each request insert holds a key-share lock on the
      // document row, and each merge then wanted it exclusively: 409 CONFLICT for all but one).
      const written = await this.rows.batch(ctx, resolved, { title, description }).catch((error: unknown) => {
        throw nameValuePaths(error, resolved);
      });
      if (written.requestId === null) {
        // Every row op builds a change, so the engine always records a request.
        throw new Error('a batch write answered without its request');
      }
      return { requestId: written.requestId, merged: written.merged, revisionId: written.revisionId, ...counts };
    });
  }

  /**
   * Upserts become creates or updates: the rows that exist (in the document, or in the open request's draft when
   * `requestId` is given) are read and locked in this transaction, so a concurrent delete waits for the write.
   */
  private async resolveUpserts(ctx: DocumentContext, ops: RowOp[], requestId: string | undefined): Promise<ResolvedRowOp[]> {
    const named = ops.filter((op) => op.operation === 'upsert').map((op) => op.rowId);
    if (named.length === 0) {
      return ops as ResolvedRowOp[];
    }
    const request = requestId ? await this.engine.findRequest(ctx.document, requestId) : null;
    const states = await this.engine.scope(ctx.document, request, true).rows(named);
    return ops.map((op) =>
      op.operation === 'upsert' ? { ...op, operation: states.get(op.rowId)?.exists ? 'update' : 'create' } : (op as ResolvedRowOp),
    );
  }

  /** An open request (explicit, not merged) carrying the row changes; returns its id. */
  async openRequest(
    ctx: DocumentContext,
    ops: ResolvedRowOp[],
    title: string,
    description?: string,
  ): Promise<string> {
    const dto: CreateRequestDto = {
      title,
      ...(description ? { description } : {}),
      changes: ops.map((op) =>
        op.operation === 'delete'
          ? { type: 'row-delete', target: { kind: 'row', rowId: op.rowId } }
          : {
              type: op.operation === 'create' ? 'row-create' : 'row-update',
              target: { kind: 'row', rowId: op.rowId },
              newValue: { id: op.rowId, values: op.values },
            },
      ),
    };
    try {
      // One bulk write: merged, it raises one data_bulk_operation event, not one event per row (docs/webhooks.md).
      return (await this.requests.create(ctx, dto, { bulkId: randomUUID() })).id;
    } catch (error) {
      throw renamePaths(error, ops);
    }
  }
}

/**
 * A value problem of `RowsService.batch` names the row (`rows[i]`, the op's path) and the field as `fieldId`; the
 * client is told the path it sent, as for the request form below: `rows[i].values.{fieldId}` (values as an object)
 * or `rows[i].values[k].value` (a ValueEntry array).
 */
function nameValuePaths(error: unknown, ops: RowOp[]): unknown {
  if (!(error instanceof AppException) || !error.options.details) {
    return error;
  }
  const byPath = new Map(ops.map((op) => [op.path, op]));
  const details = error.options.details.map((detail) => {
    const op = typeof detail.field === 'string' ? byPath.get(detail.field) : undefined;
    const fieldId = detail.fieldId;
    if (!op || typeof fieldId !== 'string') {
      return detail;
    }
    if (op.valuesByField) {
      return { ...detail, field: `${op.path}.values.${fieldId}` };
    }
    const index = op.values.findIndex((entry) => entry.fieldId === fieldId);
    return index < 0 ? detail : { ...detail, field: `${op.path}.values[${index}].value` };
  });
  return new AppException(error.code, { ...error.options, details });
}

/**
 * `changes[i].newValue.values[k]…` paths of the documents module (the Change it built) → the path in the body the
 * client sent: `rows[i].values.color` (values as an object) or `rows[i].values[k].value` (a ValueEntry array);
 * `changes[i]` of a sync request the same way.
 */
function renamePaths(error: unknown, ops: RowOp[]): unknown {
  if (!(error instanceof AppException) || !error.options.details) {
    return error;
  }
  const details = error.options.details.map((detail) => {
    const match = typeof detail.field === 'string' ? /^changes\[(\d+)\](.*)$/.exec(detail.field) : null;
    const op = match ? ops[Number(match[1])] : undefined;
    return op && match ? { ...detail, field: `${op.path}${clientSuffix(op, match[2] ?? '')}` } : detail;
  });
  return new AppException(error.code, { ...error.options, details });
}

function clientSuffix(op: RowOp, suffix: string): string {
  const value = /^\.newValue\.values\[(\d+)\](.*)$/.exec(suffix);
  if (value) {
    const index = Number(value[1]);
    const rest = value[2] ?? '';
    const entry = op.values[index];
    if (op.valuesByField && entry) {
      // In the object form the entry is the key itself: its `.value` and `.fieldId` are `values.{fieldId}`.
      const inner = rest.replace(/^\.(value|fieldId)(?=$|[.[])/, '');
      return `.values.${entry.fieldId}${inner}`;
    }
    return `.values[${index}]${rest}`;
  }
  const values = /^\.newValue\.values(.*)$/.exec(suffix);
  if (values) {
    return `.values${values[1] ?? ''}`;
  }
  return suffix.startsWith('.newValue') ? suffix.slice('.newValue'.length) : suffix;
}
