import type { FieldDefinition, RelationRef, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_SET,
  jsonSql,
  type ConvertResult,
  type FieldRef,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { dedupe, describeInput, invalid, isPlainObject, unwrapValue } from './field-value.utils.js';

/** The Value keys relation writes accept. */
const RELATION_KEYS = ['relation', 'relations'];

function parseRef(item: unknown, field: FieldDefinition, index: number): RelationRef {
  if (typeof item === 'string' && item !== '') {
    return { rowId: item };
  }
  if (!isPlainObject(item) || typeof item.rowId !== 'string' || item.rowId === '') {
    return invalid(
      field,
      `relation[${index}] must be a row id or {docType?, docId?, rowId}, got ${describeInput(item)}`,
    );
  }
  const ref: RelationRef = { rowId: item.rowId };
  for (const key of ['docType', 'docId'] as const) {
    const value = item[key];
    if (value !== undefined && value !== null) {
      if (typeof value !== 'string') {
        return invalid(field, `relation[${index}].${key} must be a string`);
      }
      ref[key] = value;
    }
  }
  return ref;
}

/**
 * A relation value holding each row once however its references name it: `{rowId}` and `{docType, docId, rowId}`
 * naming the document the value belongs to (`own`) are the same row, so only the first of them written is kept (the
 * parser, which does not know the document, removes only duplicates written the same way).
 */
export function sameRowsOnce(stored: StoredValue, own: { docType: string; docId: string }): StoredValue {
  if (!Array.isArray(stored)) {
    return stored;
  }
  return dedupe(stored, (item) =>
    isPlainObject(item) ? JSON.stringify([item.docType ?? own.docType, item.docId ?? own.docId, item.rowId]) : JSON.stringify(item),
  );
}

/**
 * relation. Value `{relation: [{docType?, docId?, rowId}]}` (or `{relations}`), a plain array, a row id or one
 * reference; stored as an array of references (deduplicated; a reference without docType/docId points into the
 * same document). Filters compare row ids: `eq` / `ne` (links exactly these rows), `contains` (all of them),
 * `in` (any of them), `notIn`, is_empty / is_not_empty.
 */
export class RelationFieldHandler extends BaseFieldHandler {
  readonly family = 'relation';
  readonly operators = OPS_SET;
  readonly ruleKind = 'list';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    let raw = unwrapValue(input, RELATION_KEYS);
    if (raw === null || raw === undefined || raw === '') {
      return null;
    }
    if (!Array.isArray(raw)) {
      raw = [raw];
    }
    const refs = dedupe(
      (raw as unknown[]).map((item, index) => parseRef(item, field, index)),
      (ref) => JSON.stringify([ref.docType ?? null, ref.docId ?? null, ref.rowId]),
    );
    return refs.length === 0 ? null : (refs as unknown as StoredValue);
  }

  toValue(stored: StoredValue): Value {
    return { relation: (Array.isArray(stored) ? stored : []) as unknown as RelationRef[] };
  }

  toPortable(stored: StoredValue): PortableValue {
    const rowIds = (Array.isArray(stored) ? stored : []).map((item) =>
      isPlainObject(item) ? String(item.rowId) : '',
    );
    return { kind: 'relations', text: rowIds.join(', '), stored };
  }

  convertFrom(source: PortableValue): ConvertResult {
    return source.kind === 'relations' ? { ok: true, value: source.stored } : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: jsonSql(ref), cast: 'jsonb' };
  }

  /** A row id, `{rowId}`, or either inside `{relation}` / `{relations}`. */
  override operand(value: unknown): OperandResult {
    const raw = unwrapValue(value, RELATION_KEYS);
    const rowId = typeof raw === 'string' ? raw : isPlainObject(raw) ? raw.rowId : undefined;
    return typeof rowId === 'string' && rowId !== ''
      ? { ok: true, value: rowId }
      : { ok: false, reason: 'expected a row id' };
  }
}
