import type { FieldDefinition, StoredValue, SystemColumn, Value } from './field.types.js';
import { BaseFieldHandler } from './base.field.js';
import { normalizeDateTime, toIsoDateTime } from './date-time.utils.js';
import {
  OPS_EQUALITY,
  OPS_ORDERED,
  OPS_TEXT,
  jsonSql,
  textSql,
  type ConvertResult,
  type FieldRef,
  type FieldTypeHandler,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { invalid, isPlainObject, toFiniteNumber, unwrapValue } from './field-value.utils.js';
import { numericSql } from './number.field.js';
import { userOperand, usersPortable } from './user.field.js';

export const READ_ONLY_REASON = 'field is computed and read-only';

/** The Value of a dynamically typed computed value, keyed by its runtime type. */
export function dynamicValue(stored: StoredValue): Value {
  if (typeof stored === 'number') {
    return { number: stored };
  }
  if (typeof stored === 'boolean') {
    return { boolean: stored };
  }
  if (typeof stored === 'string') {
    return { text: stored };
  }
  if (Array.isArray(stored)) {
    return { list: stored };
  }
  return { json: isPlainObject(stored) ? (stored as { [key: string]: StoredValue }) : {} };
}

function dynamicPortable(stored: StoredValue): PortableValue {
  if (typeof stored === 'number') {
    return { kind: 'number', text: String(stored), number: stored, stored };
  }
  if (typeof stored === 'boolean') {
    return { kind: 'boolean', text: String(stored), boolean: stored, stored };
  }
  if (typeof stored === 'string') {
    return { kind: 'text', text: stored, stored };
  }
  const text = Array.isArray(stored)
    ? stored.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join(', ')
    : JSON.stringify(stored);
  return { kind: 'json', text, stored };
}

/**
 * Computed types: clients never write them. A non-empty written value is refused with
 * `field is computed and read-only`; an empty one (null, {}) is ignored. Rules are not applied.
 * Converting any field to a computed type drops its stored values (`{ok: true, value: null}`).
 */
abstract class ComputedFieldHandler extends BaseFieldHandler {
  override readonly computed = true;
  readonly ruleKind = 'none';

  protected parseValue(_input: unknown, field: FieldDefinition): StoredValue | null {
    return invalid(field, READ_ONLY_REASON);
  }

  toPortable(stored: StoredValue): PortableValue {
    return dynamicPortable(stored);
  }

  convertFrom(): ConvertResult {
    return { ok: true, value: null };
  }
}

/** auto_number: an integer the service assigns on create, kept in `values`. Response `{number}`. */
export class AutoNumberFieldHandler extends ComputedFieldHandler {
  readonly family = 'number';
  readonly operators = OPS_ORDERED;

  toValue(stored: StoredValue): Value {
    return { number: Number(stored) };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return numericSql(ref);
  }

  override operand(value: unknown): OperandResult {
    const number = toFiniteNumber(unwrapValue(value, ['number']));
    return number === null ? { ok: false, reason: 'expected a finite number' } : { ok: true, value: number };
  }
}

/** rollup: the aggregate (sum/avg/min/max/count) the service materializes into `values`. Response `{number}`. */
export class RollupFieldHandler extends AutoNumberFieldHandler {
  override toValue(stored: StoredValue): Value {
    return typeof stored === 'number' ? { number: stored } : dynamicValue(stored);
  }
}

/**
 * lookup, formula: any JSON the service materializes into `values`. Response by runtime type:
 * `{number}`, `{text}`, `{boolean}`, `{list: [...]}` (lookups of several rows), `{json: {...}}`.
 * Filters compare as JSON (eq also matches a list holding the value), numbers numerically, text case-insensitively.
 */
export class DynamicFieldHandler extends ComputedFieldHandler {
  readonly family = 'dynamic';
  readonly operators = OPS_TEXT;

  toValue(stored: StoredValue): Value {
    return dynamicValue(stored);
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: jsonSql(ref), cast: 'jsonb' };
  }

  /** A string, finite number or boolean, plain or as the Value it is answered in (`{number: 3}`). */
  override operand(input: unknown): OperandResult {
    const value = unwrapValue(input, ['number', 'text', 'boolean']);
    if (typeof value === 'string' || typeof value === 'boolean') {
      return { ok: true, value };
    }
    if (typeof value === 'number' && Number.isFinite(value)) {
      return { ok: true, value };
    }
    return { ok: false, reason: 'expected a string, finite number or boolean' };
  }
}

/**
 * formula with an inferred `resultType`: read-only like every computed type, but queried, sorted, indexed and
 * rendered exactly as the stored type of its result (number, text, boolean, datetime), whose handler it wraps.
 */
export class TypedComputedFieldHandler extends ComputedFieldHandler {
  readonly family: FieldTypeHandler['family'];
  readonly operators: FieldTypeHandler['operators'];

  constructor(private readonly inner: FieldTypeHandler) {
    super();
    this.family = inner.family;
    this.operators = inner.operators;
  }

  toValue(stored: StoredValue, field: FieldDefinition): Value {
    return this.inner.toValue(stored, field);
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return this.inner.sqlExpr(ref);
  }

  override sortExpr(ref: FieldRef, field: FieldDefinition, bind: (value: unknown) => string): TypedSql {
    return this.inner.sortExpr(ref, field, bind);
  }

  override operand(value: unknown, field: FieldDefinition): OperandResult {
    return this.inner.operand(value, field);
  }
}

/** created_time, updated_time: read from the row's `created_at` / `updated_at`. Response `{date: ISO UTC}`. */
export class SystemTimeFieldHandler extends ComputedFieldHandler {
  readonly family = 'datetime';
  readonly operators = OPS_ORDERED;

  constructor(readonly systemColumn: SystemColumn) {
    super();
  }

  toValue(stored: StoredValue): Value {
    return { date: toIsoDateTime(stored) ?? String(stored) };
  }

  override toPortable(stored: StoredValue): PortableValue {
    const iso = toIsoDateTime(stored) ?? String(stored);
    return { kind: 'datetime', text: iso, iso, stored: iso };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return ref.kind === 'json'
      ? { sql: textSql(ref), cast: 'text' }
      : { sql: ref.column, cast: 'timestamptz' };
  }

  override operand(input: unknown): OperandResult {
    const value = unwrapValue(input, ['date', 'datetime']);
    const iso = typeof value === 'string' ? normalizeDateTime(value) : null;
    if (iso === null) {
      return { ok: false, reason: 'expected an ISO 8601 date-time' };
    }
    // The operand is compared with a timestamptz column, and PostgreSQL has no year 0 (its 1 BC is "0001 BC"): such
    // an operand failed in the database as a VALIDATION_ERROR naming no field. No row time is before year 1 anyway.
    return iso.startsWith('0000-')
      ? { ok: false, reason: 'expected an ISO 8601 date-time from year 0001 on' }
      : { ok: true, value: iso };
  }
}

/** created_by, updated_by: read from the row's `created_by` / `updated_by`. Response `{user: {id}}`. */
export class SystemUserFieldHandler extends ComputedFieldHandler {
  readonly family = 'id';
  readonly operators = OPS_EQUALITY;

  constructor(readonly systemColumn: SystemColumn) {
    super();
  }

  toValue(stored: StoredValue): Value {
    return { user: { id: String(stored) } };
  }

  override toPortable(stored: StoredValue): PortableValue {
    return usersPortable([String(stored)], stored);
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: textSql(ref), cast: 'text' };
  }

  override operand(value: unknown): OperandResult {
    return userOperand(value);
  }
}
