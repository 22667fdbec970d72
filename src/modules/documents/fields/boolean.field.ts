import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_EQUALITY,
  guardedJsonCast,
  type ConvertResult,
  type FieldRef,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { describeInput, invalid, unwrapValue } from './field-value.utils.js';

/**
 * boolean. Value `{boolean: true}`, a boolean, or the strings "true" / "false" (any case); stored as a JSON boolean.
 * In queries a missing value counts as false (checkbox semantics): `eq false` and `in [false]` match unset rows.
 */
export class BooleanFieldHandler extends BaseFieldHandler {
  readonly family = 'boolean';
  readonly operators = OPS_EQUALITY;
  readonly ruleKind = 'scalar';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    const raw = unwrapValue(input, ['boolean']);
    if (raw === null || raw === undefined) {
      return null;
    }
    if (typeof raw === 'boolean') {
      return raw;
    }
    if (typeof raw === 'string' && ['true', 'false'].includes(raw.trim().toLowerCase())) {
      return raw.trim().toLowerCase() === 'true';
    }
    return invalid(field, `expected a boolean, got ${describeInput(raw)}`);
  }

  toValue(stored: StoredValue): Value {
    return { boolean: stored === true };
  }

  toPortable(stored: StoredValue): PortableValue {
    return { kind: 'boolean', text: stored === true ? 'true' : 'false', boolean: stored === true, stored };
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if (source.kind === 'boolean') {
      return { ok: true, value: source.boolean === true };
    }
    return source.kind === 'text' ? this.tryParse(source.text, toField) : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: `COALESCE(${guardedJsonCast(ref, 'boolean', 'boolean')}, FALSE)`, cast: 'boolean' };
  }
}
