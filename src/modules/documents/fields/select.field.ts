import type { FieldDefinition, SelectOptionValue, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_EQUALITY,
  OPS_SET,
  jsonSql,
  textSql,
  type ConvertResult,
  type FieldRef,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import {
  dedupe,
  describeInput,
  findOption,
  idOf,
  invalid,
  optionLabel,
  unwrapValue,
} from './field-value.utils.js';

/** The option's data for a response; a deleted option answers its id alone. */
export function optionValue(field: FieldDefinition, id: string): SelectOptionValue {
  const option = findOption(field, id, false);
  if (!option) {
    return { id };
  }
  const value: SelectOptionValue = { id: option.id };
  if (option.name !== undefined) {
    value.name = option.name;
  }
  if (option.label !== undefined) {
    value.label = option.label;
  }
  if (option.color !== undefined) {
    value.color = option.color;
  }
  return value;
}

function selectPortable(ids: string[], field: FieldDefinition, stored: StoredValue): PortableValue {
  const items = ids.map((id) => {
    const option = findOption(field, id, false);
    return { id, label: option ? optionLabel(option) : id };
  });
  return { kind: 'select', text: items.map((item) => item.label).join(', '), items, stored };
}

/** Option ids of the target field for option ids or labels of another field; null when one does not match. */
function matchOptions(
  candidates: { id: string; label: string }[],
  toField: FieldDefinition,
): string[] | null {
  const ids: string[] = [];
  for (const candidate of candidates) {
    const option = findOption(toField, candidate.id, false) ?? findOption(toField, candidate.label, true);
    if (!option) {
      return null;
    }
    ids.push(option.id);
  }
  return dedupe(ids, (id) => id);
}

function candidatesOf(source: PortableValue, splitText: boolean): { id: string; label: string }[] | null {
  if (source.kind === 'select') {
    return source.items ?? [];
  }
  if (source.kind === 'text') {
    const parts = splitText ? source.text.split(',') : [source.text];
    return parts
      .map((part) => part.trim())
      .filter((part) => part !== '')
      .map((part) => ({ id: part, label: part }));
  }
  return null;
}

/** The Value keys the writes of single_select and multi_select accept. */
const SINGLE_SELECT_KEYS = ['selectOption', 'select', 'singleSelect'];
const MULTI_SELECT_KEYS = ['multiSelect', 'selectOptions', 'select', 'selectOption'];

/** One option id: `"id"`, `{id}`, or either inside the field's Value keys (`{selectOption: {id}}`). */
function optionIdOperand(value: unknown, field: FieldDefinition, keys: readonly string[]): OperandResult {
  const id = idOf(unwrapValue(value, keys));
  if (id === null) {
    return { ok: false, reason: 'expected a select option id' };
  }
  return findOption(field, id, false)
    ? { ok: true, value: id }
    : { ok: false, reason: `unknown select option "${id}"` };
}

/**
 * single_select. Value `{selectOption: {id}}`, `{selectOption: "id"}`, `{select: "id"}`, or a plain id / `{id}`;
 * stored as the option id. Only ids are accepted (labels are not looked up on write or in filters).
 * Response `{selectOption: {id, name, label, color}}`. Sorts by the option order of the definition.
 */
export class SingleSelectFieldHandler extends BaseFieldHandler {
  readonly family = 'select';
  readonly operators = OPS_EQUALITY;
  readonly ruleKind = 'scalar';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    const raw = unwrapValue(input, SINGLE_SELECT_KEYS);
    if (raw === null || raw === undefined || raw === '') {
      return null;
    }
    const id = idOf(raw);
    if (id === null) {
      return invalid(field, `expected a select option, got ${describeInput(raw)}`);
    }
    return findOption(field, id, false) ? id : invalid(field, `unknown select option "${id}"`);
  }

  toValue(stored: StoredValue, field: FieldDefinition): Value {
    return { selectOption: optionValue(field, String(stored)) };
  }

  toPortable(stored: StoredValue, field: FieldDefinition): PortableValue {
    return selectPortable([String(stored)], field, stored);
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    const candidates = candidatesOf(source, false);
    if (candidates === null || candidates.length > 1) {
      return NOT_CONVERTIBLE;
    }
    const ids = matchOptions(candidates, toField);
    return ids === null ? NOT_CONVERTIBLE : { ok: true, value: ids[0] ?? null };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: textSql(ref), cast: 'text' };
  }

  override sortExpr(ref: FieldRef, field: FieldDefinition, bind: (value: unknown) => string): TypedSql {
    const order = (field.selectOptions ?? []).map((option) => option.id);
    return { sql: `array_position(${bind(order)}::text[], ${textSql(ref)})`, cast: 'integer' };
  }

  override operand(value: unknown, field: FieldDefinition): OperandResult {
    return optionIdOperand(value, field, SINGLE_SELECT_KEYS);
  }
}

/**
 * multi_select. Value `{multiSelect: [{id} | "id", ...]}` or a plain array (a single id is accepted too);
 * stored as an array of option ids, deduplicated in first-seen order. Response `{multiSelect: [{id, ...}]}`.
 */
export class MultiSelectFieldHandler extends BaseFieldHandler {
  readonly family = 'set';
  readonly operators = OPS_SET;
  readonly ruleKind = 'list';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    let raw = unwrapValue(input, MULTI_SELECT_KEYS);
    if (raw === null || raw === undefined) {
      return null;
    }
    if (typeof raw === 'string' || (idOf(raw) !== null && !Array.isArray(raw))) {
      raw = [raw];
    }
    if (!Array.isArray(raw)) {
      return invalid(field, `expected an array of select options, got ${describeInput(raw)}`);
    }
    const ids: string[] = [];
    for (const item of raw) {
      const id = idOf(item);
      if (id === null) {
        return invalid(field, `expected select option ids, got ${describeInput(item)}`);
      }
      if (!findOption(field, id, false)) {
        return invalid(field, `unknown select option "${id}"`);
      }
      ids.push(id);
    }
    const unique = dedupe(ids, (id) => id);
    return unique.length === 0 ? null : unique;
  }

  toValue(stored: StoredValue, field: FieldDefinition): Value {
    const ids = Array.isArray(stored) ? stored.map(String) : [String(stored)];
    return { multiSelect: ids.map((id) => optionValue(field, id)) };
  }

  toPortable(stored: StoredValue, field: FieldDefinition): PortableValue {
    return selectPortable(Array.isArray(stored) ? stored.map(String) : [String(stored)], field, stored);
  }

  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult {
    if (source.kind === 'select') {
      // Options one by one: an option the field no longer has (removed from this field, or missing in the new one)
      // drops out of the value and the others stay. Nothing left: not convertible, reported like a single_select
      // whose option was removed (docs/values.md, "Conversions").
      const ids = dedupe(
        (source.items ?? []).flatMap((item) => {
          const option = findOption(toField, item.id, false) ?? findOption(toField, item.label, true);
          return option ? [option.id] : [];
        }),
        (id) => id,
      );
      return ids.length === 0 ? NOT_CONVERTIBLE : { ok: true, value: ids };
    }
    const candidates = candidatesOf(source, true);
    const ids = candidates === null ? null : matchOptions(candidates, toField);
    if (ids === null) {
      return NOT_CONVERTIBLE;
    }
    return { ok: true, value: ids.length === 0 ? null : ids };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: jsonSql(ref), cast: 'jsonb' };
  }

  override operand(value: unknown, field: FieldDefinition): OperandResult {
    return optionIdOperand(value, field, MULTI_SELECT_KEYS);
  }
}
