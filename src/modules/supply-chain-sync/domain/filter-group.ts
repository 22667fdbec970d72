import { isDeepStrictEqual } from 'node:util';
import type { SelectOption } from '../../documents/fields/field.types.js';
import { selectOptionResolver } from '../../supply-chain/domain/select-operands.js';
import type { FILTER_OPERATORS } from '../../supply-chain/domain/supply-chain.types.js';

/**
 * Filter groups of spec 2.14 (shareScope, receiverFilter, accept rules, connector source filters), evaluated over
 * one row in memory: `{operator: AND|OR, conditions[], groups[]}` (also `logic: and|or`, spec 2.12). A condition is
 * `{fieldId | field, operator, value | values | rangeStart/rangeEnd}`. An empty group matches every row.
 */
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface FilterCondition {
  fieldId?: string;
  field?: string;
  operator: FilterOperator;
  value?: unknown;
  values?: unknown[];
  rangeStart?: unknown;
  rangeEnd?: unknown;
}

export interface FilterGroup {
  operator?: 'AND' | 'OR' | 'and' | 'or';
  logic?: 'and' | 'or' | 'AND' | 'OR';
  conditions?: FilterCondition[];
  groups?: FilterGroup[];
}

/**
 * Reads a field of the row being tested, in its plain form (a select gives its labels). `stored` reads it as stored
 * (a select gives its option ids) and `options` gives a select field's options: with both, a condition's operand
 * names an option by id or by label (`selectOptionResolver`) and is compared by option id; without them (or for an
 * operand naming no option) operands are compared with the plain value.
 */
export type FieldReader = ((fieldRef: string) => unknown) & {
  stored?: (fieldRef: string) => unknown;
  options?: (fieldRef: string) => readonly SelectOption[] | undefined;
};

function isEmpty(value: unknown): boolean {
  return (
    value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

/** Numbers compare as numbers (numeric strings included), everything else as strings (ISO dates sort as text). */
function compare(left: unknown, right: unknown): number | null {
  if (isEmpty(left) || isEmpty(right)) {
    return null;
  }
  const a =
    typeof left === 'number' ? left : typeof left === 'string' && left.trim() !== '' ? Number(left) : NaN;
  const b =
    typeof right === 'number'
      ? right
      : typeof right === 'string' && right.trim() !== ''
        ? Number(right)
        : NaN;
  if (Number.isFinite(a) && Number.isFinite(b)) {
    return a === b ? 0 : a < b ? -1 : 1;
  }
  if (typeof left === 'object' || typeof right === 'object') {
    return null;
  }
  const x = String(left);
  const y = String(right);
  return x === y ? 0 : x < y ? -1 : 1;
}

function scalarEquals(left: unknown, right: unknown): boolean {
  if (isDeepStrictEqual(left, right)) {
    return true;
  }
  if (
    typeof left === 'object' ||
    typeof right === 'object' ||
    left === null ||
    right === null ||
    left === undefined
  ) {
    return false;
  }
  const order = compare(left, right);
  if (order === 0 && typeof left === typeof right) {
    return true;
  }
  // "12" equals 12; string comparison is case-sensitive, as the query engine's `eq`.
  return order === 0 && (typeof left === 'number' || typeof right === 'number');
}

/**
 * A value equals the operand; an array value (multi-select) equals when any element does. A one-element array
 * operand against a single value is that element: conditions stored before validation unwrapped a one-element
 * `values` for eq/ne hold `value: ["ok"]`, and a single value can never equal an array anyway.
 */
function equals(value: unknown, operand: unknown): boolean {
  if (Array.isArray(value) && !Array.isArray(operand)) {
    return value.some((item) => scalarEquals(item, operand));
  }
  if (!Array.isArray(value) && Array.isArray(operand) && operand.length === 1) {
    return scalarEquals(value, operand[0]);
  }
  return scalarEquals(value, operand);
}

function listOf(condition: FilterCondition): unknown[] {
  if (Array.isArray(condition.values)) {
    return condition.values;
  }
  return Array.isArray(condition.value)
    ? condition.value
    : condition.value === undefined
      ? []
      : [condition.value];
}

function rangeOf(condition: FilterCondition): [unknown, unknown] {
  if (condition.rangeStart !== undefined || condition.rangeEnd !== undefined) {
    return [condition.rangeStart, condition.rangeEnd];
  }
  const list = listOf(condition);
  return [list[0], list[1]];
}

/** One resolver per option list (a field's options are the same array for every row a reader reads). */
const resolvers = new WeakMap<readonly SelectOption[], (operand: unknown) => string | undefined>();

/**
 * Whether the field's value equals an operand (a multi-select: one of its options does). A select field resolves the
 * operand to an option (by id, else by label) and compares option ids; an operand that names no option (conditions
 * stored before operands were checked) is compared with the labels, as before.
 */
function equalityOf(read: FieldReader, ref: string, value: unknown): (operand: unknown) => boolean {
  const options = read.options?.(ref);
  if (!options || options.length === 0 || !read.stored) {
    return (operand) => equals(value, operand);
  }
  let resolve = resolvers.get(options);
  if (!resolve) {
    resolve = selectOptionResolver(options);
    resolvers.set(options, resolve);
  }
  const ids = read.stored(ref);
  const resolveOption = resolve;
  return (operand) => {
    const id = resolveOption(operand);
    return id === undefined ? equals(value, operand) : equals(ids, id);
  };
}

export function evaluateCondition(condition: FilterCondition, read: FieldReader): boolean {
  const ref = condition.fieldId ?? condition.field ?? '';
  const value = read(ref);
  const same = equalityOf(read, ref, value);
  switch (condition.operator) {
    case 'eq':
      return same(condition.value ?? condition.values?.[0]);
    case 'ne':
      return !same(condition.value ?? condition.values?.[0]);
    case 'in':
      return listOf(condition).some((operand) => same(operand));
    case 'notIn':
      return !listOf(condition).some((operand) => same(operand));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const order = compare(value, condition.value ?? condition.values?.[0]);
      if (order === null) {
        return false;
      }
      return condition.operator === 'gt'
        ? order > 0
        : condition.operator === 'gte'
          ? order >= 0
          : condition.operator === 'lt'
            ? order < 0
            : order <= 0;
    }
    case 'range': {
      const [start, end] = rangeOf(condition);
      const low = start === undefined || start === null ? 0 : compare(value, start);
      const high = end === undefined || end === null ? 0 : compare(value, end);
      return low !== null && high !== null && low >= 0 && high <= 0;
    }
    case 'contains': {
      const operand = condition.value ?? condition.values?.[0];
      if (Array.isArray(value)) {
        // A multi-select (or list) holds every wanted element; `same` of an array value is "one element equals".
        const wanted = Array.isArray(operand) ? operand : [operand];
        return wanted.every((item) =>
          Array.isArray(item) ? value.some((element) => scalarEquals(element, item)) : same(item),
        );
      }
      return (
        typeof value === 'string' &&
        operand !== undefined &&
        operand !== null &&
        value.toLowerCase().includes(String(operand).toLowerCase())
      );
    }
    case 'startsWith':
    case 'endsWith': {
      const operand = condition.value ?? condition.values?.[0];
      if (typeof value !== 'string' || operand === undefined || operand === null) {
        return false;
      }
      const text = value.toLowerCase();
      const part = String(operand).toLowerCase();
      return condition.operator === 'startsWith' ? text.startsWith(part) : text.endsWith(part);
    }
    case 'exists': {
      // `exists` alone (or with value true) asks for a value; `value: false` asks for none.
      const wanted = condition.value === undefined ? true : condition.value !== false;
      return wanted === !isEmpty(value);
    }
    case 'is_empty':
      return isEmpty(value);
    case 'is_not_empty':
      return !isEmpty(value);
    default: {
      const unknownOperator: never = condition.operator;
      throw new Error(`unknown filter operator ${String(unknownOperator)}`);
    }
  }
}

/** Whether the row matches the group; an absent or empty group matches. */
export function evaluateFilterGroup(group: FilterGroup | null | undefined, read: FieldReader): boolean {
  if (!group) {
    return true;
  }
  const results: boolean[] = [];
  for (const condition of group.conditions ?? []) {
    results.push(evaluateCondition(condition, read));
  }
  for (const nested of group.groups ?? []) {
    results.push(evaluateFilterGroup(nested, read));
  }
  if (results.length === 0) {
    return true;
  }
  const or = (group.operator ?? group.logic ?? 'AND').toUpperCase() === 'OR';
  return or ? results.some(Boolean) : results.every(Boolean);
}

/** Whether a group holds at least one condition (an empty `autoAcceptIf` never matches, see accept-rules.ts). */
export function hasConditions(group: FilterGroup | null | undefined): boolean {
  return !!group && ((group.conditions?.length ?? 0) > 0 || (group.groups ?? []).some(hasConditions));
}

/** Every field a group names (to check them against the catalog's fields). */
export function filterFieldRefs(group: FilterGroup | null | undefined): string[] {
  if (!group) {
    return [];
  }
  const refs = (group.conditions ?? []).map((condition) => condition.fieldId ?? condition.field ?? '');
  return [...refs, ...(group.groups ?? []).flatMap(filterFieldRefs)];
}
