import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import { formulaFieldRefs, parseFormula } from '../../../common/formula/index.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import type { FilterCondition, FilterGroup } from '../domain/supply-chain.types.js';
import { selectOptionResolver } from '../domain/select-operands.js';

/**
 * Checks of a parsed sync configuration against the fields of the documents it names: which field ids it refers to
 * (filters, formulas), which of them a document lacks, and which condition operands cannot fit their field's type.
 * Kept apart from sync-config.validation.ts because those parsers are pure shape checks that need no document;
 * these need the fields of the catalog, order book or connector source, which the services load first.
 */

/** Every field id a filter group names, nested groups included. */
export function filterFieldIds(group: FilterGroup | undefined): string[] {
  if (!group) {
    return [];
  }
  return [
    ...group.conditions.map((condition) => condition.fieldId),
    ...group.groups.flatMap((inner) => filterFieldIds(inner)),
  ];
}

/**
 * `[path, fieldId]` pairs of every condition of a filter group, nested groups included: an unknown field id is named
 * where it was written (`shareScope.filterGroup.groups[0].conditions[1].fieldId`), not by its whole group.
 */
export function filterFieldRefs(group: FilterGroup | undefined, path: string): Array<[string, string]> {
  if (!group) {
    return [];
  }
  return [
    ...group.conditions.map((condition, index): [string, string] => [
      `${path}.conditions[${index}].fieldId`,
      condition.fieldId,
    ]),
    ...group.groups.flatMap((inner, index) => filterFieldRefs(inner, `${path}.groups[${index}]`)),
  ];
}

/**
 * VALIDATION_ERROR entries for field ids that the document does not have: `refs` are `[path, fieldId]` pairs,
 * `known` the document's field ids.
 */
export function unknownFieldDetails(
  refs: Array<[string, string]>,
  known: Set<string>,
  what: string,
): ErrorDetail[] {
  return refs
    .filter(([, id]) => !known.has(id))
    .map(([field, id]) => ({ field, reason: `${what} has no field "${id}"` }));
}

const NUMBER_FIELD_TYPES: ReadonlySet<string> = new Set([
  'number',
  'currency',
  'percent',
  'rating',
  'duration',
  'auto_number',
  'rollup',
]);
const DATE_FIELD_TYPES: ReadonlySet<string> = new Set(['date', 'datetime', 'created_time', 'updated_time']);
const TEXT_OPERATORS: ReadonlySet<string> = new Set(['contains', 'startsWith', 'endsWith']);
const DATE_OPERAND = /^\d{4}-\d{2}-\d{2}/;

/** Whether the operand's leading YYYY-MM-DD names a day that exists (Date.parse rolls 2030-02-30 over to March). */
function isCalendarDay(operand: string): boolean {
  const [year, month, day] = operand.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function shown(operand: unknown): string {
  return JSON.stringify(operand) ?? String(operand);
}

function isNumeric(operand: unknown): boolean {
  return (
    (typeof operand === 'number' && Number.isFinite(operand)) ||
    (typeof operand === 'string' && operand.trim() !== '' && Number.isFinite(Number(operand)))
  );
}

/**
 * Why a condition's operands cannot fit the field it tests (null when they can): an operand naming no option of a
 * select field (by id or label, `selectOptionResolver`), a non-number on a number field, a non-date on a date field,
 * a non-boolean on a boolean field, a text operator on a number or boolean field. Such a condition could never match
 * (or, negated, always would). `null` operands (no value) and fields of other types are left alone.
 */
function operandProblem(condition: FilterCondition, field: FieldDefinition): string | null {
  const { operator } = condition;
  if (operator === 'exists' || operator === 'is_empty' || operator === 'is_not_empty') {
    return null;
  }
  const operands = (Array.isArray(condition.value) ? condition.value : [condition.value]).filter(
    (operand) => operand !== null && operand !== undefined,
  );
  const what = `"${field.id}" is a ${field.type} field`;
  if (field.type === 'single_select' || field.type === 'multi_select') {
    // On a single select the text operators test the label's text; everything else names options.
    if (TEXT_OPERATORS.has(operator) && !(operator === 'contains' && field.type === 'multi_select')) {
      return null;
    }
    if (['gt', 'gte', 'lt', 'lte', 'range'].includes(operator)) {
      return null;
    }
    const resolve = selectOptionResolver(field.selectOptions ?? []);
    const unknown = operands.find((operand) => resolve(operand) === undefined);
    return unknown === undefined
      ? null
      : `${shown(unknown)} names no option of the ${field.type} field "${field.id}" (give an option id or label)`;
  }
  if (NUMBER_FIELD_TYPES.has(field.type) || field.type === 'boolean') {
    if (TEXT_OPERATORS.has(operator)) {
      return `${operator} tests text; ${what}`;
    }
    const fits = field.type === 'boolean' ? (operand: unknown) => typeof operand === 'boolean' : isNumeric;
    const misfit = operands.find((operand) => !fits(operand));
    return misfit === undefined
      ? null
      : `${shown(misfit)} is not a ${field.type === 'boolean' ? 'boolean' : 'number'}; ${what}`;
  }
  if (DATE_FIELD_TYPES.has(field.type) && !TEXT_OPERATORS.has(operator)) {
    const misfit = operands.find(
      (operand) =>
        typeof operand !== 'string' ||
        !DATE_OPERAND.test(operand) ||
        Number.isNaN(Date.parse(operand)) ||
        !isCalendarDay(operand),
    );
    return misfit === undefined ? null : `${shown(misfit)} is not a date (YYYY-MM-DD or ISO 8601); ${what}`;
  }
  return null;
}

/**
 * VALIDATION_ERROR entries for condition operands of a (parsed) filter group that cannot fit the fields they test,
 * `fields` being the fields the filter runs on (the catalog's, for a share scope, a receiver filter and accept
 * rules). Conditions on fields not in `fields` are left to `unknownFieldDetails`. Paths follow the group as sent:
 * `…conditions[i].value` (a `range` written with rangeStart/rangeEnd: the condition).
 */
export function filterOperandDetails(
  group: FilterGroup | undefined,
  path: string,
  fields: readonly FieldDefinition[],
): ErrorDetail[] {
  if (!group) {
    return [];
  }
  const byId = new Map(fields.map((field) => [field.id, field]));
  const details: ErrorDetail[] = [];
  const walk = (current: FilterGroup, at: string): void => {
    current.conditions.forEach((condition, index) => {
      const field = byId.get(condition.fieldId);
      const reason = field ? operandProblem(condition, field) : null;
      if (reason) {
        const conditionPath = `${at}.conditions[${index}]`;
        details.push({
          field: condition.operator === 'range' ? conditionPath : `${conditionPath}.value`,
          reason,
        });
      }
    });
    current.groups.forEach((inner, index) => walk(inner, `${at}.groups[${index}]`));
  };
  walk(group, path);
  return details;
}

/** The source fields a `formula` rule reads (its syntax was checked when the rule was written). */
export function formulaSourceFieldIds(rule: { transformType?: string; formula?: string }): string[] {
  return rule.transformType === 'formula' && rule.formula ? formulaFieldRefs(parseFormula(rule.formula)) : [];
}
