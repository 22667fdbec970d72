import { assertNever } from '../../../common/assert-never.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import {
  FILTER_OPERATORS,
  type FilterCondition,
  type FilterGroup,
  type FilterLogic,
} from '../domain/supply-chain.types.js';
import type { ConfigChecker } from './sync-config.validation.js';

/**
 * Parsing of the filter groups that sync configurations carry (share scope, receiver filter, accept rules, connector
 * source filter): nesting, condition operators and their operands. Kept apart from the configuration objects in
 * sync-config.validation.ts because it is a small language of its own (operators, operand forms, Value unwrapping)
 * that every one of them embeds. Problems go to the caller's `ConfigChecker`, as its own parsers do.
 */

const MAX_FILTER_DEPTH = 5;
const MAX_CONDITIONS = 100;

const UNREADABLE = Symbol('unreadable operand');

/** The typed keys of a Value (spec 2.6, docs/values.md) whose content is one plain value. */
const SCALAR_VALUE_KEYS: ReadonlySet<string> = new Set([
  'text',
  'number',
  'currency',
  'percent',
  'boolean',
  'date',
  'datetime',
  'duration',
  'rating',
]);
/** The typed keys whose content names one thing by id: an option id string, or an object with `id`. */
const REFERENCE_VALUE_KEYS: ReadonlySet<string> = new Set(['selectOption', 'select', 'singleSelect', 'user']);

/**
 * A condition operand as a plain value: scalars as they are, a Value with one typed key by its content
 * (`{number: 3}` → 3, `{selectOption: {id: "red"}}` or `{selectOption: "red"}` → "red"). Any other object — another
 * key (`{min: 5}`), several keys, a list — is UNREADABLE: taken by its content it would compare with something the
 * client did not write.
 */
function plainOperand(operand: unknown): unknown {
  if (!isPlainObject(operand)) {
    return operand;
  }
  const entries = Object.entries(operand);
  if (entries.length !== 1) {
    return UNREADABLE;
  }
  const [key, inner] = entries[0] as [string, unknown];
  if (REFERENCE_VALUE_KEYS.has(key)) {
    if (typeof inner === 'string') {
      return inner;
    }
    // The rendered form ({id, label, color…}) names the option by its id too.
    return isPlainObject(inner) && typeof inner.id === 'string' ? inner.id : UNREADABLE;
  }
  if (!SCALAR_VALUE_KEYS.has(key)) {
    return UNREADABLE;
  }
  return inner === null || ['string', 'number', 'boolean'].includes(typeof inner) ? inner : UNREADABLE;
}

/** `{operator: AND|OR, conditions[], groups[]}`; `logic` is accepted for `operator`, any case. */
export function parseFilterGroup(
  checker: ConfigChecker,
  raw: unknown,
  path: string,
  depth = 1,
): FilterGroup | undefined {
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be a filter group {operator: AND|OR, conditions[], groups[]}`);
    return undefined;
  }
  if (depth > MAX_FILTER_DEPTH) {
    checker.fail(path, `filter groups nest at most ${MAX_FILTER_DEPTH} deep`);
    return undefined;
  }
  checker.knownKeys(raw, ['operator', 'logic', 'conditions', 'groups'], path);
  const logicRaw = raw.operator ?? raw.logic ?? 'AND';
  let operator: FilterLogic = 'AND';
  if (typeof logicRaw !== 'string' || !['AND', 'OR'].includes(logicRaw.toUpperCase())) {
    checker.fail(`${path}.operator`, `${path}.operator must be AND or OR`);
  } else {
    operator = logicRaw.toUpperCase() as FilterLogic;
  }
  const conditions: FilterCondition[] = [];
  const groups: FilterGroup[] = [];
  for (const [key, max] of [
    ['conditions', MAX_CONDITIONS],
    ['groups', MAX_CONDITIONS],
  ] as const) {
    const list = raw[key];
    if (list !== undefined && list !== null && (!Array.isArray(list) || list.length > max)) {
      checker.fail(`${path}.${key}`, `${path}.${key} must be an array of at most ${max} entries`);
    }
  }
  const rawConditions = Array.isArray(raw.conditions) ? (raw.conditions as unknown[]) : [];
  rawConditions.forEach((condition, index) => {
    const parsed = parseCondition(checker, condition, `${path}.conditions[${index}]`);
    if (parsed) {
      conditions.push(parsed);
    }
  });
  const rawGroups = Array.isArray(raw.groups) ? (raw.groups as unknown[]) : [];
  rawGroups.forEach((group, index) => {
    const parsed = parseFilterGroup(checker, group, `${path}.groups[${index}]`, depth + 1);
    if (parsed) {
      groups.push(parsed);
    }
  });
  return { operator, conditions, groups };
}

function parseCondition(checker: ConfigChecker, raw: unknown, path: string): FilterCondition | undefined {
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be a condition {fieldId, operator, value}`);
    return undefined;
  }
  checker.knownKeys(raw, ['fieldId', 'field', 'operator', 'value', 'values', 'rangeStart', 'rangeEnd'], path);
  const fieldId = checker.id(raw.fieldId ?? raw.field, `${path}.fieldId`);
  const operator = checker.enumValue(raw.operator, FILTER_OPERATORS, `${path}.operator`);
  const given = raw.values !== undefined ? raw.values : raw.value;
  // Operands are plain values; a Value with one typed key ({text: "S1"}, {number: 3}, spec 2.6) is read as its
  // plain value, as a row filter reads it. Anything else would never match a stored value: refused.
  const value = Array.isArray(given) ? given.map(plainOperand) : plainOperand(given);
  if ((Array.isArray(value) ? value : [value]).some((item) => item === UNREADABLE)) {
    checker.fail(
      `${path}.value`,
      'an operand is a string, number, boolean or null, or a Value with one typed key ({text: …}, {number: …}, {selectOption: {id}})',
    );
    return undefined;
  }
  // `values` (spec 2.14: "value (or values)") holding one operand, for an operator that takes one.
  const single =
    raw.value === undefined && Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (!fieldId || !operator) {
    return undefined;
  }
  switch (operator) {
    case 'in':
    case 'notIn':
      if (!Array.isArray(value)) {
        checker.fail(`${path}.value`, `${operator} needs an array (value or values)`);
        return undefined;
      }
      break;
    case 'range': {
      if (raw.rangeStart !== undefined || raw.rangeEnd !== undefined) {
        // Spec 2.12's form: the bounds by name; a missing or null one leaves that side open.
        const bounds = [raw.rangeStart ?? null, raw.rangeEnd ?? null];
        if (
          bounds.some((bound) => bound !== null && typeof bound !== 'number' && typeof bound !== 'string')
        ) {
          checker.fail(`${path}.rangeStart`, 'rangeStart and rangeEnd are numbers or date strings');
          return undefined;
        }
        return { fieldId, operator, value: bounds };
      }
      if (!Array.isArray(value) || value.length !== 2) {
        checker.fail(
          `${path}.value`,
          'range needs rangeStart and rangeEnd, or a two-element array [min, max]',
        );
        return undefined;
      }
      break;
    }
    case 'is_empty':
    case 'is_not_empty':
      return { fieldId, operator };
    case 'exists':
      // Alone (or `value: true`) the field has a value; `value: false`, it has none.
      if (single !== undefined && typeof single !== 'boolean') {
        checker.fail(`${path}.value`, 'exists takes no value, or true/false');
        return undefined;
      }
      return single === undefined ? { fieldId, operator } : { fieldId, operator, value: single };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof single !== 'number' && typeof single !== 'string') {
        checker.fail(
          `${path}.value`,
          `${operator} needs a number or a date string (value, or values with one element)`,
        );
        return undefined;
      }
      return { fieldId, operator, value: single };
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      if (typeof single !== 'string') {
        checker.fail(`${path}.value`, `${operator} needs a string (value, or values with one element)`);
        return undefined;
      }
      return { fieldId, operator, value: single };
    case 'eq':
    case 'ne':
      if (value === undefined) {
        checker.fail(`${path}.value`, `${operator} needs a value`);
        return undefined;
      }
      // A one-element `values` is the operand itself (as for gte, contains…), not an array to compare with.
      return { fieldId, operator, value: single };
    default:
      return assertNever(operator);
  }
  return { fieldId, operator, value };
}
