import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { isPlainObject } from '../fields/field-value.utils.js';

/** Spec 8: rows in one bulk operation. */
export const MAX_BULK_ROWS = 1000;
const MAX_BULK_ITEMS = 10_000;

/** Raw (unparsed) values a bulk call writes to one row or to the properties, with where each came from. */
export interface BulkTargetValues {
  values: Record<string, unknown>;
  /** Field id → path of the item that set it, for error details. */
  paths: Record<string, string>;
  /** Path of the first item naming this target. */
  path: string;
  /**
   * Values a later item replaced (`paths` names the later one): still checked, so every cell a bulk call sends is
   * valid even when another item overrides it.
   */
  overridden?: { fieldId: string; value: unknown; path: string }[];
}

export interface BulkRequest {
  rows: Map<string, BulkTargetValues>;
  properties: BulkTargetValues | null;
}

/** `[{fieldId, value}]` or `{fieldId: value}` → an object. */
function valuesObject(raw: unknown, path: string, errors: ErrorDetail[]): Record<string, unknown> | null {
  if (Array.isArray(raw)) {
    const result: Record<string, unknown> = {};
    raw.forEach((entry: unknown, index) => {
      if (!isPlainObject(entry) || typeof entry.fieldId !== 'string') {
        errors.push({ field: `${path}[${index}]`, reason: 'each entry needs a fieldId and a value' });
        return;
      }
      if (!Object.hasOwn(entry, 'value')) {
        // A ValueEntry is {fieldId, value} (spec 2.6): a missing value would read as undefined and clear the cell.
        errors.push({ field: `${path}[${index}].value`, fieldId: entry.fieldId, reason: 'value is required (null clears the field)' });
        return;
      }
      const extra = Object.keys(entry).find((key) => key !== 'fieldId' && key !== 'value');
      if (extra !== undefined) {
        errors.push({ field: `${path}[${index}].${extra}`, fieldId: entry.fieldId, reason: 'unknown key (a value entry is {fieldId, value})' });
        return;
      }
      result[entry.fieldId] = entry.value;
    });
    return result;
  }
  if (isPlainObject(raw)) {
    return raw;
  }
  errors.push({ field: path, reason: 'must be an object of field id to value, or an array of {fieldId, value}' });
  return null;
}

/** Keys an update item and its target may have; anything else is refused rather than ignored. */
const ITEM_KEYS = new Set(['target', 'value']);
/** Spec 4.4's order-book form `{rows: [{target: {row}, values, metadata}]}`: `metadata` is accepted and not stored. */
const ORDER_BOOK_ROW_KEYS = new Set(['target', 'values', 'value', 'metadata']);
const TARGET_KEYS = new Set(['row', 'field', 'rows', 'property', 'properties']);
/** Spec 4.4's five target forms, by the keys each has; a target must be exactly one of them. */
const TARGET_FORMS: readonly (readonly string[])[] = [['row', 'field'], ['row'], ['rows', 'field'], ['property'], ['properties']];
const TARGET_FORMS_TEXT = 'target must be exactly one of {row, field}, {row}, {rows, field}, {property} or {properties: true}';

/** Whether the target's keys are exactly those of one form: a mixed target would be applied only in part. */
function isOneTargetForm(target: Record<string, unknown>): boolean {
  const keys = Object.keys(target).sort();
  return TARGET_FORMS.some((form) => form.length === keys.length && [...form].sort().every((key, i) => key === keys[i]));
}

/** Records every key of `object` outside `allowed`; true when there was one. */
function refuseUnknownKeys(object: Record<string, unknown>, allowed: ReadonlySet<string>, at: string, errors: ErrorDetail[]): boolean {
  let found = false;
  for (const key in object) {
    if (!allowed.has(key)) {
      errors.push({
        field: `${at}.${key}`,
        reason:
          key === 'version'
            ? 'bulk updates carry no row version: write a row with PUT /data/{rowId} and version for an optimistic check'
            : `unknown key (an update is {${[...allowed].join(', ')}})`,
      });
      found = true;
    }
  }
  return found;
}

function isId(value: unknown): value is string {
  // U+0000 cannot reach PostgreSQL text: refused here, naming the target, not by the database without a field.
  return typeof value === 'string' && value !== '' && value.length <= 128 && !value.includes('\u0000');
}

function assign(target: BulkTargetValues, values: Record<string, unknown>, path: string): void {
  for (const [fieldId, value] of Object.entries(values)) {
    if (Object.hasOwn(target.values, fieldId)) {
      (target.overridden ??= []).push({ fieldId, value: target.values[fieldId], path: target.paths[fieldId] ?? target.path });
    }
    target.values[fieldId] = value;
    target.paths[fieldId] = path;
  }
}

/**
 * Reads a bulk body (spec 4.4): an array of `{target, value}` — or `{updates: [...]}`, or the order-book form
 * `{rows: [{target: {row}, values: [...]}]}` — where the target is exactly one of `{row, field}`, `{row}`,
 * `{rows[], field}`, `{property}` or `{properties: true}` (a mix is refused, never applied in part), and a
 * single-cell item must carry `value` (null clears; a missing one is refused). Later items override earlier ones for the same cell (the earlier values are
 * kept in `overridden` to be checked too). Collects every
 * structural error; more than 1000 distinct rows is a VALIDATION_ERROR.
 */
export function parseBulkRequest(body: unknown): BulkRequest {
  const errors: ErrorDetail[] = [];
  let items: unknown[];
  let prefix = '';
  if (Array.isArray(body)) {
    items = body;
  } else if (isPlainObject(body) && Array.isArray(body.updates)) {
    items = body.updates;
    prefix = 'updates';
  } else if (isPlainObject(body) && Array.isArray(body.rows)) {
    items = body.rows.map((row: unknown) => (isPlainObject(row) ? { target: row.target, value: row.values ?? row.value } : row));
    prefix = 'rows';
  } else {
    throw AppException.validation([{ field: 'body', reason: 'body must be an array of {target, value}' }]);
  }
  if (!Array.isArray(body)) {
    // As for any body (docs/errors.md): a misspelt or extra key beside `updates`/`rows` is refused, not ignored.
    const unknown = Object.keys(body as Record<string, unknown>).filter((key) => key !== prefix);
    if (unknown.length > 0) {
      throw AppException.validation(
        unknown.map((key) => ({ field: key, reason: `unknown key (the body is {${prefix}: [...]} or an array of {target, value})` })),
      );
    }
  }
  if (items.length === 0) {
    throw AppException.validation([{ field: 'body', reason: 'at least one update is required' }]);
  }
  if (items.length > MAX_BULK_ITEMS) {
    throw AppException.validation([{ field: 'body', reason: `at most ${MAX_BULK_ITEMS} updates per call` }]);
  }
  const result: BulkRequest = { rows: new Map(), properties: null };
  const rowTarget = (rowId: string, path: string): BulkTargetValues => {
    let target = result.rows.get(rowId);
    if (!target) {
      target = { values: {}, paths: {}, path };
      result.rows.set(rowId, target);
    }
    return target;
  };

  const itemKeys = prefix === 'rows' ? ORDER_BOOK_ROW_KEYS : ITEM_KEYS;
  const sent: unknown[] = prefix === 'rows' ? ((body as Record<string, unknown>).rows as unknown[]) : items;
  items.forEach((item: unknown, index) => {
    const at = `${prefix}[${index}]`;
    if (!isPlainObject(item) || !isPlainObject(item.target)) {
      errors.push({ field: `${at}.target`, reason: 'each update needs a target' });
      return;
    }
    const target = item.target;
    const original = sent[index];
    // Both checked, so every unknown key of the item is named at once.
    const unknownItemKey = isPlainObject(original) && refuseUnknownKeys(original, itemKeys, at, errors);
    const unknownTargetKey = refuseUnknownKeys(target, TARGET_KEYS, `${at}.target`, errors);
    if (unknownItemKey || unknownTargetKey) {
      return;
    }
    // The order-book form names its values `values` (spec 4.4) or `value`: errors point at the key that was sent.
    const sentValues = prefix === 'rows' && isPlainObject(original) && original.values !== undefined;
    if (sentValues && isPlainObject(original) && original.value !== undefined) {
      errors.push({ field: `${at}.value`, reason: 'give values or value, not both' });
      return;
    }
    const valuePath = `${at}.${sentValues ? 'values' : 'value'}`;
    if (!isOneTargetForm(target)) {
      errors.push({ field: `${at}.target`, reason: TARGET_FORMS_TEXT });
      return;
    }
    // {row, field}, {rows, field} and {property} write the one value the item carries: it must be there (null
    // clears), or the cell would silently be cleared.
    const hasValue = (): boolean => {
      if (item.value === undefined) {
        errors.push({ field: valuePath, reason: 'value is required (null clears the field)' });
        return false;
      }
      return true;
    };
    if (target.properties !== undefined) {
      if (target.properties !== true) {
        errors.push({ field: `${at}.target.properties`, reason: 'must be true' });
        return;
      }
      const values = valuesObject(item.value, valuePath, errors);
      if (values) {
        result.properties ??= { values: {}, paths: {}, path: at };
        assign(result.properties, values, valuePath);
      }
    } else if (target.property !== undefined) {
      if (!isId(target.property)) {
        errors.push({ field: `${at}.target.property`, reason: 'must be a property field id' });
        return;
      }
      if (!hasValue()) {
        return;
      }
      result.properties ??= { values: {}, paths: {}, path: at };
      assign(result.properties, { [target.property]: item.value }, valuePath);
    } else if (target.rows !== undefined) {
      if (!Array.isArray(target.rows) || target.rows.length === 0 || !target.rows.every(isId)) {
        errors.push({ field: `${at}.target.rows`, reason: 'must be a non-empty array of row ids' });
        return;
      }
      if (!isId(target.field)) {
        errors.push({ field: `${at}.target.field`, reason: 'must be a field id' });
        return;
      }
      if (!hasValue()) {
        return;
      }
      for (const rowId of target.rows as string[]) {
        assign(rowTarget(rowId, at), { [target.field]: item.value }, valuePath);
      }
    } else if (target.row !== undefined) {
      if (!isId(target.row)) {
        errors.push({ field: `${at}.target.row`, reason: 'must be a row id' });
        return;
      }
      if (target.field !== undefined) {
        if (!isId(target.field)) {
          errors.push({ field: `${at}.target.field`, reason: 'must be a field id' });
          return;
        }
        if (!hasValue()) {
          return;
        }
        assign(rowTarget(target.row, at), { [target.field]: item.value }, valuePath);
      } else {
        const values = valuesObject(item.value, valuePath, errors);
        if (values) {
          assign(rowTarget(target.row, at), values, valuePath);
        }
      }
    }
  });
  if (result.rows.size > MAX_BULK_ROWS) {
    errors.push({ field: 'body', reason: `at most ${MAX_BULK_ROWS} rows per bulk operation, got ${result.rows.size}` });
  }
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return result;
}
