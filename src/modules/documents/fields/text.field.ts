import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler } from './base.field.js';
import {
  OPS_TEXT,
  textSql,
  type ConvertResult,
  type FieldRef,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { describeInput, invalid, unwrapValue } from './field-value.utils.js';

/**
 * text, long_text. Value `{text: "..."}` or a plain string; stored as the string. An empty string is empty.
 * Every other type converts to text through its display text.
 */
export class TextFieldHandler extends BaseFieldHandler {
  readonly family = 'text';
  readonly operators = OPS_TEXT;
  readonly ruleKind = 'text';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    const raw = unwrapValue(input, ['text']);
    if (raw === null || raw === undefined) {
      return null;
    }
    if (typeof raw !== 'string') {
      return invalid(field, `expected text, got ${describeInput(raw)}`);
    }
    return raw === '' ? null : raw;
  }

  toValue(stored: StoredValue): Value {
    return { text: typeof stored === 'string' ? stored : JSON.stringify(stored) };
  }

  toPortable(stored: StoredValue): PortableValue {
    const text = typeof stored === 'string' ? stored : JSON.stringify(stored);
    return { kind: 'text', text, stored };
  }

  convertFrom(source: PortableValue): ConvertResult {
    return { ok: true, value: source.text === '' ? null : source.text };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: textSql(ref), cast: 'text' };
  }
}
