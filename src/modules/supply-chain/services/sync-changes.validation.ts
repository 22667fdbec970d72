import { randomUUID } from 'node:crypto';
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE } from '../../../common/http/client-ids.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import {
  SYNC_CHANGE_OPERATIONS,
  type SyncChange,
  type SyncChangeOperation,
} from '../domain/supply-chain.types.js';
import { MAX_BATCH_ROWS, type ResolvedRowOp, valueEntries } from './document-writes.service.js';

/**
 * Parsing of the `changes[]` of a sync request (`POST /orderbooks/{id}/requests`, and what the propagation passes to
 * SyncRequestService.createForBinding): each change as recorded on the sync request, and as the row operation the
 * document writes apply. Kept apart from the service's create/decide flow because it is pure body validation, like
 * parseBatchRows next to it in document-writes.service.ts.
 */

/** Keys a sync change may carry (`target: {row}` names the row as in the batch form). */
const CHANGE_KEYS = new Set(['operation', 'rowId', 'target', 'values', 'sourceRowId']);

/**
 * Why a key of a change is refused: a change in another shape (`data` or `newValue` as in a document request's
 * changes, `value`) would otherwise be recorded with no values and answer 201 having proposed nothing.
 */
function unknownChangeKeyReason(key: string): string {
  if (key === 'data' || key === 'newValue' || key === 'value' || key === 'fields') {
    return `unknown key ${key}: a sync change carries values (an array of {fieldId, value} or an object of field id to Value)`;
  }
  return `unknown key ${key}: a change is {operation, rowId?, values?, sourceRowId?} (or target: {row} for rowId)`;
}

/**
 * Validates sync changes (`create_row` with values, `update_row` with rowId and values, `delete_row` with rowId).
 * Unknown keys of a change or of its target are refused with their path, as for batch rows.
 */
export function parseSyncChanges(raw: unknown): { changes: SyncChange[]; ops: ResolvedRowOp[] } {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_BATCH_ROWS) {
    throw AppException.validation([
      { field: 'changes', reason: `changes must be an array of 1 to ${MAX_BATCH_ROWS} changes` },
    ]);
  }
  const errors: ErrorDetail[] = [];
  const changes: SyncChange[] = [];
  const ops: ResolvedRowOp[] = [];
  raw.forEach((change: unknown, index) => {
    const at = `changes[${index}]`;
    if (!isPlainObject(change)) {
      errors.push({ field: at, reason: 'each change must be an object {operation, rowId, values}' });
      return;
    }
    const unknown = Object.keys(change).filter((key) => !CHANGE_KEYS.has(key));
    const unknownInTarget = isPlainObject(change.target)
      ? Object.keys(change.target).filter((key) => key !== 'row')
      : [];
    if (unknown.length > 0 || unknownInTarget.length > 0) {
      errors.push(
        ...unknown.map((key) => ({ field: `${at}.${key}`, reason: unknownChangeKeyReason(key) })),
        ...unknownInTarget.map((key) => ({
          field: `${at}.target.${key}`,
          reason: `unknown key ${key}: a change's target is {row}`,
        })),
      );
      return;
    }
    if (change.target !== undefined && !isPlainObject(change.target)) {
      errors.push({ field: `${at}.target`, reason: 'target must be an object {row}' });
      return;
    }
    const operation = change.operation;
    if (typeof operation !== 'string' || !(SYNC_CHANGE_OPERATIONS as readonly string[]).includes(operation)) {
      errors.push({
        field: `${at}.operation`,
        reason: `operation must be one of ${SYNC_CHANGE_OPERATIONS.join(', ')}`,
      });
      return;
    }
    const op = operation as SyncChangeOperation;
    const targetRow = isPlainObject(change.target) ? change.target.row : undefined;
    if (change.rowId !== undefined && targetRow !== undefined && change.rowId !== targetRow) {
      // Two names for the row that disagree: neither is guessed at.
      errors.push({ field: `${at}.target.row`, reason: 'rowId and target.row name different rows' });
      return;
    }
    const rowIdRaw = change.rowId ?? targetRow;
    if (rowIdRaw !== undefined && (typeof rowIdRaw !== 'string' || !CLIENT_ID_PATTERN.test(rowIdRaw))) {
      errors.push({ field: `${at}.rowId`, reason: `rowId ${CLIENT_ID_RULE}` });
      return;
    }
    if (op !== 'create_row' && rowIdRaw === undefined) {
      errors.push({ field: `${at}.rowId`, reason: `${op} needs rowId` });
      return;
    }
    const values = op === 'delete_row' ? [] : valueEntries(change.values);
    if (values === null) {
      errors.push({
        field: `${at}.values`,
        reason: 'values must be an array of {fieldId, value} or an object of field id to Value',
      });
      return;
    }
    const sourceRowIdRaw = change.sourceRowId;
    if (
      sourceRowIdRaw !== undefined &&
      sourceRowIdRaw !== null &&
      (typeof sourceRowIdRaw !== 'string' || sourceRowIdRaw.length > 128)
    ) {
      // It used to be dropped when not a string and cut at 128 characters, without a word.
      errors.push({ field: `${at}.sourceRowId`, reason: 'sourceRowId must be a string of at most 128 characters' });
      return;
    }
    const rowId = (rowIdRaw as string | undefined) ?? randomUUID();
    const sourceRowId = typeof sourceRowIdRaw === 'string' ? sourceRowIdRaw : undefined;
    changes.push({
      operation: op,
      rowId,
      ...(op === 'delete_row' ? {} : { values }),
      ...(sourceRowId ? { sourceRowId } : {}),
    });
    ops.push({
      operation: op === 'create_row' ? 'create' : op === 'update_row' ? 'update' : 'delete',
      rowId,
      values,
      path: at,
      ...(isPlainObject(change.values) ? { valuesByField: true } : {}),
    });
  });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return { changes, ops };
}
