import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import type {
  ConvertResult,
  FieldRef,
  FieldTypeHandler,
  FilterOperator,
  OperandResult,
  PortableValue,
  QueryFamily,
  TypedSql,
} from './field-type-handler.js';
import { extraValueKeys, invalid, isEmptyInput, NUL_REASON, nulPath, validationDetailsOf } from './field-value.utils.js';
import { applyValidationRules, type RuleKind } from './validation-rules.js';

export const NOT_CONVERTIBLE: ConvertResult = { ok: false };

/** Shared behaviour of the handlers; each subclass states its family, operators and rule kind. */
export abstract class BaseFieldHandler implements FieldTypeHandler {
  readonly computed: boolean = false;
  abstract readonly family: QueryFamily;
  abstract readonly operators: readonly FilterOperator[];
  abstract readonly ruleKind: RuleKind;

  /** Parses a non-empty input (`null`, `undefined` and `{}` never reach it). */
  protected abstract parseValue(input: unknown, field: FieldDefinition): StoredValue | null;

  abstract toValue(stored: StoredValue, field: FieldDefinition): Value;
  abstract toPortable(stored: StoredValue, field: FieldDefinition): PortableValue;
  abstract convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult;
  abstract sqlExpr(ref: FieldRef): TypedSql;

  /**
   * Refuses a Value with several keys (spec 2.6: one typed key), and any value holding U+0000 (in its text, ids,
   * names or keys), which PostgreSQL cannot store.
   */
  parse(input: unknown, field: FieldDefinition): StoredValue | null {
    const keys = extraValueKeys(input);
    if (keys !== null) {
      return invalid(field, `a Value carries one typed key, got ${keys.join(', ')}`);
    }
    const stored = isEmptyInput(input) ? null : this.parseValue(input, field);
    return stored !== null && nulPath(stored, '') !== null ? invalid(field, `text ${NUL_REASON}`) : stored;
  }

  sortExpr(ref: FieldRef, _field: FieldDefinition, _bind: (value: unknown) => string): TypedSql {
    return this.sqlExpr(ref);
  }

  validateRules(stored: StoredValue, field: FieldDefinition): ErrorDetail[] {
    return applyValidationRules(stored, field, this.ruleKind);
  }

  /** By default an operand is parsed like a written value and must be a single primitive. */
  operand(value: unknown, field: FieldDefinition): OperandResult {
    try {
      const parsed = this.parse(value, field);
      if (typeof parsed === 'string' || typeof parsed === 'number' || typeof parsed === 'boolean') {
        return { ok: true, value: parsed };
      }
      return { ok: false, reason: 'value must be a single non-empty value of the field type' };
    } catch (error) {
      const details = validationDetailsOf(error);
      if (details) {
        return { ok: false, reason: details[0]?.reason ?? 'invalid value' };
      }
      throw error;
    }
  }

  /** Parses `input` and returns `{ok: false}` instead of throwing. */
  protected tryParse(input: unknown, field: FieldDefinition): ConvertResult {
    try {
      return { ok: true, value: this.parse(input, field) };
    } catch (error) {
      if (validationDetailsOf(error)) {
        return NOT_CONVERTIBLE;
      }
      throw error;
    }
  }
}
