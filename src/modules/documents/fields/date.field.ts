import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import { normalizeDate, normalizeDateTime } from './date-time.utils.js';
import {
  OPS_ORDERED,
  textSql,
  type ConvertResult,
  type FieldRef,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { describeInput, invalid, unwrapValue } from './field-value.utils.js';

function parseIsoInput(
  input: unknown,
  field: FieldDefinition,
  normalize: (text: string) => string | null,
  what: string,
): string | null {
  const raw = unwrapValue(input, ['date', 'datetime']);
  if (raw === null || raw === undefined || raw === '') {
    return null;
  }
  if (typeof raw !== 'string') {
    return invalid(field, `expected ${what}, got ${describeInput(raw)}`);
  }
  return normalize(raw) ?? invalid(field, `expected ${what}, got ${JSON.stringify(raw)}`);
}

/**
 * date. Value `{date: "2024-01-02"}` or an ISO 8601 string; stored as `YYYY-MM-DD` (a date-time keeps the
 * calendar date as written). Text order of stored values is date order.
 */
export class DateFieldHandler extends BaseFieldHandler {
  readonly family = 'date';
  readonly operators = OPS_ORDERED;
  readonly ruleKind = 'date';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    return parseIsoInput(input, field, normalizeDate, 'an ISO 8601 date (YYYY-MM-DD)');
  }

  toValue(stored: StoredValue): Value {
    return { date: String(stored) };
  }

  toPortable(stored: StoredValue): PortableValue {
    return { kind: 'date', text: String(stored), iso: String(stored), stored };
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if ((source.kind === 'date' || source.kind === 'datetime') && source.iso) {
      // A datetime becomes its UTC calendar date.
      return { ok: true, value: source.iso.slice(0, 10) };
    }
    return source.kind === 'text' ? this.tryParse(source.text.trim(), toField) : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: textSql(ref), cast: 'text' };
  }
}

/**
 * datetime. Value `{date: "2024-01-02T10:00:00+02:00"}` (the spec's `date` key; `{datetime}` is accepted too)
 * or an ISO 8601 string; stored as UTC `YYYY-MM-DDTHH:mm:ss.sssZ`, so text order is time order.
 * A date alone means its midnight UTC; a time without an offset is UTC.
 */
export class DateTimeFieldHandler extends BaseFieldHandler {
  readonly family = 'datetime';
  readonly operators = OPS_ORDERED;
  readonly ruleKind = 'datetime';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    return parseIsoInput(input, field, normalizeDateTime, 'an ISO 8601 date-time');
  }

  toValue(stored: StoredValue): Value {
    return { date: String(stored) };
  }

  toPortable(stored: StoredValue): PortableValue {
    return { kind: 'datetime', text: String(stored), iso: String(stored), stored };
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if ((source.kind === 'date' || source.kind === 'datetime') && source.iso) {
      const iso = normalizeDateTime(source.iso);
      return iso ? { ok: true, value: iso } : NOT_CONVERTIBLE;
    }
    return source.kind === 'text' ? this.tryParse(source.text.trim(), toField) : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return ref.kind === 'json'
      ? { sql: textSql(ref), cast: 'text' }
      : { sql: ref.column, cast: 'timestamptz' };
  }
}
