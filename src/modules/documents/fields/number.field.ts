import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_ORDERED,
  guardedJsonCast,
  type ConvertResult,
  type FieldRef,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { describeInput, invalid, toFiniteNumber, unwrapValue } from './field-value.utils.js';

/**
 * The SQL of a numeric value: double precision from JSON (NULL when the JSON is not a number), or the bigint
 * column itself, compared with double precision operands.
 */
export function numericSql(ref: FieldRef): TypedSql {
  return ref.kind === 'json'
    ? { sql: guardedJsonCast(ref, 'number', 'double precision'), cast: 'double precision' }
    : { sql: ref.column, cast: 'double precision' };
}

function parseNumber(
  input: unknown,
  field: FieldDefinition,
  keys: readonly string[],
  what: string,
): number | null {
  const raw = unwrapValue(input, keys);
  if (raw === null || raw === undefined || raw === '') {
    return null;
  }
  if (typeof raw !== 'number' && typeof raw !== 'string') {
    return invalid(field, `expected ${what}, got ${describeInput(raw)}`);
  }
  const value = toFiniteNumber(raw);
  return value === null ? invalid(field, `expected ${what}, got ${JSON.stringify(raw)}`) : value;
}

/** number, currency, percent. Value `{number: 1.5}`, a number or a numeric string; stored as a JSON number. */
export class NumberFieldHandler extends BaseFieldHandler {
  readonly family = 'number';
  readonly operators = OPS_ORDERED;
  readonly ruleKind = 'number';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    return parseNumber(input, field, ['number', 'currency', 'percent'], 'a finite number');
  }

  toValue(stored: StoredValue): Value {
    return { number: Number(stored) };
  }

  toPortable(stored: StoredValue): PortableValue {
    return { kind: 'number', text: String(stored), number: Number(stored), stored };
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if (source.kind === 'number' && source.number !== undefined) {
      return { ok: true, value: source.number };
    }
    return source.kind === 'text' ? this.tryParse(source.text.trim(), toField) : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return numericSql(ref);
  }
}

/** Shared by duration (any safe integer) and rating (1–5). */
abstract class IntegerFieldHandler extends BaseFieldHandler {
  readonly family = 'number';
  readonly operators = OPS_ORDERED;
  readonly ruleKind = 'number';
  protected abstract readonly keys: readonly string[];
  protected abstract check(value: number): boolean;
  protected abstract readonly requirement: string;

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    const value = parseNumber(input, field, this.keys, 'a finite number');
    if (value !== null && !this.check(value)) {
      return invalid(field, `${this.requirementFor(value)}, got ${value}`);
    }
    return value;
  }

  /** What the value fails to be, for the refusal's reason. */
  protected requirementFor(_value: number): string {
    return this.requirement;
  }

  toPortable(stored: StoredValue): PortableValue {
    return { kind: 'number', text: String(stored), number: Number(stored), stored };
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if (source.kind === 'number' && source.number !== undefined) {
      return this.check(source.number) ? { ok: true, value: source.number } : NOT_CONVERTIBLE;
    }
    return source.kind === 'text' ? this.tryParse(source.text.trim(), toField) : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return numericSql(ref);
  }

  /** Comparisons with any finite number are meaningful (`rating gte 3.5`); Value keys as on write. */
  override operand(value: unknown): OperandResult {
    const number = toFiniteNumber(unwrapValue(value, this.keys));
    return number === null ? { ok: false, reason: 'expected a finite number' } : { ok: true, value: number };
  }
}

/** duration. Value `{duration: 90000}` (milliseconds), a number or numeric string; stored as an integer. */
export class DurationFieldHandler extends IntegerFieldHandler {
  protected readonly keys = ['duration', 'number'];
  protected readonly requirement = 'duration must be an integer number of milliseconds';

  protected check(value: number): boolean {
    return Number.isSafeInteger(value);
  }

  /**
   * Spec 2.5 says int64, but a JSON number past 2^53 − 1 is not exact (9007199254740993 arrives as …992), so larger
   * integers are refused rather than stored changed; the reason says so instead of calling `1e18` "not an integer".
   */
  protected override requirementFor(value: number): string {
    return Number.isInteger(value)
      ? `duration must be at most ${Number.MAX_SAFE_INTEGER} milliseconds either way (larger integers are not exact as JSON numbers)`
      : this.requirement;
  }

  toValue(stored: StoredValue): Value {
    return { duration: Number(stored) };
  }
}

/** rating. Value `{rating: 4}` or a number; an integer from 1 to 5. */
export class RatingFieldHandler extends IntegerFieldHandler {
  protected readonly keys = ['rating', 'number'];
  protected readonly requirement = 'rating must be an integer from 1 to 5';

  protected check(value: number): boolean {
    return Number.isInteger(value) && value >= 1 && value <= 5;
  }

  toValue(stored: StoredValue): Value {
    return { rating: Number(stored) };
  }
}
