import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { decimalIntegerOf } from '../../../common/http/pagination.js';
import type { RowValuesInput } from '../fields/field-type.registry.js';
import { isPlainObject } from '../fields/field-value.utils.js';

/** The keys of a Row as reads answer it (spec 2.6; `readOnly` marks rows served through a data-source reference). `values` is written; `id` names the row; `version` is the optimistic lock; the others are read-only and ignored. */
export const ROW_KEYS = [
  'id',
  'values',
  'version',
  'createdAt',
  'createdBy',
  'updatedAt',
  'updatedBy',
  'readOnly',
] as const;

/** What a `row-create` / `row-update` change of `POST /requests` writes, whichever form `newValue` took. */
export interface RowChangeInput {
  /** The row named by `target.rowId` or the Row's `id`; undefined when neither names one. */
  rowId: string | undefined;
  /** Where the row id came from, for error details. */
  rowIdPath: string;
  values: RowValuesInput;
  /** Row `version` (row-update: checked like `PUT /data/{rowId}`; row-create: ignored). */
  version: number | undefined;
  /** Maps a detail of the values' parser (paths like `values[1].fieldId`) to the path in the change. */
  pathOf(detail: ErrorDetail): ErrorDetail;
}

export interface RowChangeTarget {
  rowId?: string;
  fieldId?: string;
}

/**
 * Whether `newValue` is a Row (`{id, values, version, …}`) rather than an object of field id to Value. Only
 * objects with `values` or `id` whose keys are not all field ids of the document count: an object whose every key is a
 * field (a document may name a field `values` or `id`) keeps meaning field id → Value, so every body that was
 * accepted before the Row form still means what it meant.
 */
export function isRowShape(
  newValue: unknown,
  fieldIds: ReadonlySet<string>,
): newValue is Record<string, unknown> {
  if (!isPlainObject(newValue) || !('values' in newValue || 'id' in newValue)) {
    return false;
  }
  return Object.keys(newValue).some((key) => !fieldIds.has(key));
}

function entryPath(values: unknown, base: string, fieldId: string): string {
  if (Array.isArray(values)) {
    const index = values.findIndex((entry) => isPlainObject(entry) && entry.fieldId === fieldId);
    return index >= 0 ? `${base}[${index}].value` : base;
  }
  if (isPlainObject(values) && fieldId in values) {
    return `${base}.${fieldId}`;
  }
  return base;
}

function pathMapper(
  values: unknown,
  valuesPath: string,
  rowIdPath: string,
  single: boolean,
): (detail: ErrorDetail) => ErrorDetail {
  return (detail) => {
    const field = detail.field;
    if (typeof field === 'string') {
      if (field === 'values' || field.startsWith('values[') || field.startsWith('values.')) {
        return { ...detail, field: `${valuesPath}${field.slice('values'.length)}` };
      }
      // The row's id as the builders name it (`id` of a create, `rowId` of an unknown row).
      return field === 'id' || field === 'rowId' ? { ...detail, field: rowIdPath } : detail;
    }
    if (typeof detail.fieldId === 'string') {
      return { ...detail, field: single ? valuesPath : entryPath(values, valuesPath, detail.fieldId) };
    }
    return detail;
  };
}

/**
 * Reads the `newValue` of a row change. Forms: a Row `{id?, values, version?, createdAt?, …}` (spec 2.6; the
 * audit keys are read-only and ignored; `values` may be left out on create), an array of ValueEntry, an object of field id to Value, or one Value
 * when `target.fieldId` is given. The row id comes from `target.rowId` or the Row's `id`; both given and
 * different is a VALIDATION_ERROR. Values are parsed later against the draft's metadata.
 */
export function parseRowChangeInput(
  type: 'row-create' | 'row-update',
  target: RowChangeTarget,
  newValue: unknown,
  fieldIds: ReadonlySet<string>,
): RowChangeInput {
  const targetRowId = target.rowId;
  if (target.fieldId !== undefined) {
    if (newValue === undefined) {
      // Left out, it would clear the cell: a clear is an explicit null (as for a ValueEntry without value).
      throw AppException.validation([{ field: 'newValue', reason: 'newValue is required with target.fieldId (null clears the cell)' }]);
    }
    return {
      rowId: targetRowId,
      rowIdPath: 'target.rowId',
      values: { [target.fieldId]: newValue },
      version: undefined,
      pathOf: pathMapper(undefined, 'newValue', 'target.rowId', true),
    };
  }
  if (!isRowShape(newValue, fieldIds)) {
    if (type === 'row-update' && (newValue === undefined || newValue === null)) {
      // An update without values would be recorded as a change that changes nothing (a create may be empty).
      throw AppException.validation([{ field: 'newValue', reason: 'newValue is required: the values to change' }]);
    }
    const values = (newValue ?? []) as RowValuesInput;
    return {
      rowId: targetRowId,
      rowIdPath: 'target.rowId',
      values,
      version: undefined,
      pathOf: pathMapper(values, 'newValue', 'target.rowId', false),
    };
  }
  const errors: ErrorDetail[] = [];
  for (const key of Object.keys(newValue)) {
    if (!(ROW_KEYS as readonly string[]).includes(key)) {
      errors.push({ field: `newValue.${key}`, reason: `unknown Row key; a Row has ${ROW_KEYS.join(', ')}` });
    }
  }
  const { id, values } = newValue;
  const version = decimalIntegerOf(newValue.version);
  if (id !== undefined && id !== null && typeof id !== 'string') {
    errors.push({ field: 'newValue.id', reason: 'id must be a string' });
  }
  const rowId = typeof id === 'string' ? id : undefined;
  if (rowId !== undefined && targetRowId !== undefined && rowId !== targetRowId) {
    errors.push({ field: 'newValue.id', reason: `id "${rowId}" differs from target.rowId "${targetRowId}"` });
  }
  const noValues = values === undefined || values === null;
  if (noValues && type === 'row-update') {
    errors.push({ field: 'newValue.values', reason: 'values is required' });
  } else if (!noValues && !Array.isArray(values) && !isPlainObject(values)) {
    errors.push({
      field: 'newValue.values',
      reason: 'values must be an array of {fieldId, value} or an object keyed by field id',
    });
  }
  if (version !== undefined && version !== null && !(Number.isSafeInteger(version) && Number(version) >= 0)) {
    errors.push({ field: 'newValue.version', reason: 'version must be a non-negative integer' });
  }
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  const rowIdPath = targetRowId !== undefined ? 'target.rowId' : 'newValue.id';
  return {
    rowId: targetRowId ?? rowId,
    rowIdPath,
    values: noValues ? [] : (values as RowValuesInput),
    version: typeof version === 'number' ? version : undefined,
    pathOf: pathMapper(values, 'newValue.values', rowIdPath, false),
  };
}
