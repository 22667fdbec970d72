import { isDeepStrictEqual } from 'node:util';
import { JSONPath } from 'jsonpath-plus';
import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import { assertNever } from '../../../common/assert-never.js';

export const CONDITION_OPERATORS = [
  'eq',
  'ne',
  'in',
  'notIn',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'startsWith',
  'endsWith',
  'exists',
  'is_empty',
  'is_not_empty',
  'range',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface WebhookCondition {
  path: string;
  operator: ConditionOperator;
  value?: unknown;
}

/** Spec 2.13 `filters`. Every kind given must match (AND); within a list any entry may match (OR). */
export interface WebhookFilters {
  docTypes?: string[];
  docIds?: string[];
  userIds?: string[];
  conditions?: WebhookCondition[];
}

/** What the filters look at: the delivery envelope of spec 6.1. */
export interface FilterableDelivery {
  event: string;
  docType: string | null;
  docId: string | null;
  triggeredBy: string | null;
  [key: string]: unknown;
}

const MAX_LIST = 100;
const MAX_CONDITIONS = 20;

/**
 * The JSONPath subset accepted in conditions: `$` followed by `.name`, `..name`, `.*`, `[n]`, `[*]` or
 * `['name']` steps. Filter and script expressions (`[?(...)]`, `[(...)]`) are refused: they would run
 * client-chosen code on every event. jsonpath-plus itself is lenient (it accepts `$[` or an unclosed `[0`),
 * so paths are checked here first and a malformed one is VALIDATION_ERROR instead of silently matching nothing.
 */
// A quoted name holds neither quote character nor brackets: jsonpath-plus splits such a name where this pattern
// would not (`$["a']..*..*['"]` read as one name here, as four recursive descents there).
const STEP = String.raw`(?:\.\.?(?:[A-Za-z_$][\w$-]*|\*)|\[(?:\d+|\*|'(?:[^'"[\]\\]|\\.)*'|"(?:[^'"[\]\\]|\\.)*")\])`;
const JSON_PATH = new RegExp(`^\\$${STEP}*$`);

/**
 * At most one recursive descent (`..`) per path: each further one multiplies the work by the body's depth, and the
 * filters run inside the outbox dispatch — twenty `$..*..*..*..*` conditions on one 100-row bulk operation held the
 * event loop for seconds.
 */
const MAX_RECURSIVE_STEPS = 1;

/**
 * jsonpath-plus keeps every path it has parsed in a module-level cache it never evicts, and validation hands it
 * client-chosen paths (also of requests it then refuses): the cache is cleared after every PARSES_BETWEEN_CLEARS
 * parses, which bounds it while keeping the stored conditions' paths parsed most of the time.
 */
const PARSES_BETWEEN_CLEARS = 1000;
let parsesSinceClear = 0;

/** The steps of a path as jsonpath-plus reads it (what runs). */
function stepsOf(path: string): string[] {
  parsesSinceClear += 1;
  if (parsesSinceClear > PARSES_BETWEEN_CLEARS) {
    JSONPath.clearCache();
    parsesSinceClear = 0;
  }
  return JSONPath.toPathArray(path);
}

export function isSupportedJsonPath(path: string): boolean {
  if (path.length > 500 || !JSON_PATH.test(path)) {
    return false;
  }
  // Counted on the library's own reading of the path, which is what runs.
  const recursive = stepsOf(path).filter((step) => step === '..').length;
  return recursive <= MAX_RECURSIVE_STEPS;
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function isOrderable(value: unknown): value is string | number {
  return (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string';
}

function stringList(value: unknown, field: string, details: ErrorDetail[]): void {
  if (value === undefined) {
    return;
  }
  if (
    !Array.isArray(value) ||
    value.length > MAX_LIST ||
    value.some((item) => typeof item !== 'string' || item.length === 0 || item.length > 200)
  ) {
    details.push({ field, reason: `${field} must be an array of at most ${MAX_LIST} non-empty strings` });
  }
}

function conditionProblem(condition: unknown): { field: string; reason: string } | null {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) {
    return { field: '', reason: 'a condition must be an object {path, operator, value}' };
  }
  const { path, operator, value, ...rest } = condition as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    return { field: extra[0], reason: `unknown property ${extra[0]}` };
  }
  if (typeof path !== 'string' || !isSupportedJsonPath(path)) {
    return {
      field: 'path',
      reason: 'path must be a JSONPath such as $.payload.status (filter expressions are not supported)',
    };
  }
  if (typeof operator !== 'string' || !(CONDITION_OPERATORS as readonly string[]).includes(operator)) {
    return { field: 'operator', reason: `operator must be one of ${CONDITION_OPERATORS.join(', ')}` };
  }
  const op = operator as ConditionOperator;
  switch (op) {
    case 'eq':
    case 'ne':
      return value === undefined ? { field: 'value', reason: `${op} needs a value` } : null;
    case 'in':
    case 'notIn':
      return Array.isArray(value) && value.length > 0 && value.length <= MAX_LIST
        ? null
        : { field: 'value', reason: `${op} needs a non-empty array value` };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return isOrderable(value) ? null : { field: 'value', reason: `${op} needs a number or a string` };
    case 'contains':
      return isScalar(value)
        ? null
        : { field: 'value', reason: 'contains needs a string, number or boolean' };
    case 'startsWith':
    case 'endsWith':
      return typeof value === 'string' ? null : { field: 'value', reason: `${op} needs a string value` };
    case 'is_empty':
    case 'is_not_empty':
      return value === undefined || value === null || value === true
        ? null
        : { field: 'value', reason: `${op} takes no value` };
    case 'exists':
      return value === undefined || typeof value === 'boolean'
        ? null
        : { field: 'value', reason: 'exists takes true, false or no value' };
    case 'range':
      return Array.isArray(value) &&
        value.length === 2 &&
        isOrderable(value[0]) &&
        isOrderable(value[1]) &&
        typeof value[0] === typeof value[1] &&
        value[0] <= value[1]
        ? null
        : {
            field: 'value',
            reason: 'range needs a two-element array [min, max] of numbers or strings with min <= max',
          };
    default:
      return assertNever(op);
  }
}

/** Checks a `filters` object; returns the problems as VALIDATION_ERROR details (fields prefixed `filters.`). */
export function filtersProblems(filters: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (filters === undefined || filters === null) {
    return details;
  }
  if (typeof filters !== 'object' || Array.isArray(filters)) {
    return [{ field: 'filters', reason: 'filters must be an object' }];
  }
  const { docTypes, docIds, userIds, conditions, ...rest } = filters as Record<string, unknown>;
  for (const key of Object.keys(rest)) {
    details.push({
      field: `filters.${key}`,
      reason: 'unknown filter (docTypes, docIds, userIds, conditions)',
    });
  }
  stringList(docTypes, 'filters.docTypes', details);
  stringList(docIds, 'filters.docIds', details);
  stringList(userIds, 'filters.userIds', details);
  if (conditions !== undefined) {
    if (!Array.isArray(conditions) || conditions.length > MAX_CONDITIONS) {
      details.push({
        field: 'filters.conditions',
        reason: `conditions must be an array of at most ${MAX_CONDITIONS} conditions`,
      });
    } else {
      conditions.forEach((condition: unknown, index) => {
        const problem = conditionProblem(condition);
        if (problem) {
          details.push({
            field: `filters.conditions[${index}]${problem.field ? `.${problem.field}` : ''}`,
            reason: problem.reason,
          });
        }
      });
    }
  }
  return details;
}

function compare(actual: unknown, expected: unknown): number | null {
  if (typeof actual === 'number' && typeof expected === 'number') {
    return actual - expected;
  }
  if (typeof actual === 'string' && typeof expected === 'string') {
    return actual < expected ? -1 : actual > expected ? 1 : 0;
  }
  return null;
}

/** Numbers compare with numbers and strings with strings (ISO timestamps order as text); mixed types never match. */
function ordered(actual: unknown, expected: unknown, test: (diff: number) => boolean): boolean {
  const diff = compare(actual, expected);
  return diff !== null && test(diff);
}

function contains(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'string' && typeof expected === 'string') {
    return actual.includes(expected);
  }
  if (Array.isArray(actual)) {
    return actual.some((item) => isDeepStrictEqual(item, expected));
  }
  return false;
}

/** One value the path selected against the operator. */
function holds(
  operator: Exclude<ConditionOperator, 'ne' | 'notIn' | 'exists' | 'is_empty' | 'is_not_empty'>,
  actual: unknown,
  expected: unknown,
): boolean {
  switch (operator) {
    case 'eq':
      return isDeepStrictEqual(actual, expected);
    case 'in':
      return Array.isArray(expected) && expected.some((item) => isDeepStrictEqual(actual, item));
    case 'gt':
      return ordered(actual, expected, (diff) => diff > 0);
    case 'gte':
      return ordered(actual, expected, (diff) => diff >= 0);
    case 'lt':
      return ordered(actual, expected, (diff) => diff < 0);
    case 'lte':
      return ordered(actual, expected, (diff) => diff <= 0);
    case 'contains':
      return contains(actual, expected);
    case 'startsWith':
      return typeof actual === 'string' && typeof expected === 'string' && actual.startsWith(expected);
    case 'endsWith':
      return typeof actual === 'string' && typeof expected === 'string' && actual.endsWith(expected);
    case 'range': {
      const [min, max] = expected as [unknown, unknown];
      const low = compare(actual, min);
      const high = compare(actual, max);
      return low !== null && high !== null && low >= 0 && high <= 0;
    }
    default:
      return assertNever(operator);
  }
}

/** The query language's notion of empty (docs/values.md): absent, null, an empty string, array or object. */
function isEmptyValue(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)
  );
}

/**
 * The work one webhook's conditions may do for one event, in values (docs/webhooks.md, "Filter work"). Filters run
 * on the event loop inside the outbox dispatch, and jsonpath-plus takes about a microsecond per value it visits or
 * selects: ten webhooks of twenty `$..*` conditions on one 100-row bulk operation (about 2,600 values) held every
 * request for most of a second. With this budget one webhook's filters take a few milliseconds per event at most,
 * and the number of webhooks is bounded (webhooks.service.ts).
 */
export const CONDITION_BUDGET = 10_000;

/** What is left of a webhook's CONDITION_BUDGET while its conditions are evaluated for one event. */
export interface ConditionBudget {
  left: number;
  /** Set once a condition could not be evaluated within the budget. */
  exceeded?: boolean;
}

/** Values (objects, arrays and scalars) of each envelope, counted no further than CONDITION_BUDGET + 1. */
const envelopeSizes = new WeakMap<object, number>();

function valueCount(json: object): number {
  let count = envelopeSizes.get(json);
  if (count === undefined) {
    count = 0;
    const pending: unknown[] = [json];
    while (pending.length > 0 && count <= CONDITION_BUDGET) {
      const next = pending.pop();
      count += 1;
      if (typeof next === 'object' && next !== null) {
        pending.push(...Object.values(next));
      }
    }
    envelopeSizes.set(json, count);
  }
  return count;
}

/** A recursive descent or a wildcard may walk the whole envelope; names and indices select at most one value. */
function mayWalkWholeBody(path: string): boolean {
  return stepsOf(path).some((step) => step === '..' || step === '*');
}

/**
 * The values `path` selects, or null when the budget left cannot cover the most the path could cost (the condition
 * then does not hold). A path that may walk the whole envelope could visit each of its values and select each: it is
 * evaluated only while twice the envelope's values are left, and costs the envelope's values plus those it selected.
 * A path of names and indices costs what it selected. jsonpath-plus cannot be stopped half-way cheaply (its callback
 * builds a path string per value), so the most a path can cost is checked before it runs.
 */
function selectWithin(path: string, json: object, budget: ConditionBudget): unknown[] | null {
  const walked = mayWalkWholeBody(path) ? valueCount(json) : 0;
  if (budget.left < 2 * walked) {
    budget.exceeded = true;
    return null;
  }
  const values = JSONPath({ path, json, wrap: true, eval: false }) as unknown[];
  budget.left -= walked + values.length;
  if (budget.left < 0) {
    budget.exceeded = true;
    return null;
  }
  return values;
}

/**
 * A condition holds when any value its path selects satisfies the operator; `ne` and `notIn` are the
 * negations of `eq` and `in` (so they hold when the path selects nothing); `exists` (value true, the
 * default) holds when the path selects at least one value, `exists: false` when it selects none.
 * `is_empty` holds when the path selects nothing or only empty values, `is_not_empty` when it does not.
 */
export function conditionHolds(
  condition: WebhookCondition,
  delivery: object,
  budget: ConditionBudget = { left: Number.POSITIVE_INFINITY },
): boolean {
  const values = selectWithin(condition.path, delivery, budget);
  if (values === null) {
    return false;
  }
  switch (condition.operator) {
    case 'exists':
      return (condition.value !== false) === values.length > 0;
    case 'is_empty':
      return values.every(isEmptyValue);
    case 'is_not_empty':
      return !values.every(isEmptyValue);
    case 'ne':
      return !values.some((actual) => holds('eq', actual, condition.value));
    case 'notIn':
      return !values.some((actual) => holds('in', actual, condition.value));
    case 'eq':
    case 'in':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'contains':
    case 'startsWith':
    case 'endsWith':
    case 'range': {
      const operator = condition.operator;
      return values.some((actual) => holds(operator, actual, condition.value));
    }
    default:
      return assertNever(condition.operator);
  }
}

function inList(list: string[] | undefined, value: string | null): boolean {
  return !list || list.length === 0 || (value !== null && list.includes(value));
}

/** User ids are stored lower-case (normalizedFilters); ones stored before that are compared the same way. */
function userInList(list: string[] | undefined, userId: string | null): boolean {
  return !list || list.length === 0 || (userId !== null && list.some((id) => id.toLowerCase() === userId.toLowerCase()));
}

/**
 * Whether a delivery passes a webhook's filters (an empty or absent kind lets everything through): `over-budget`
 * when a condition could not be evaluated within CONDITION_BUDGET (the delivery is then recorded as skipped, so the
 * owner sees what the filters could not decide).
 */
export function filterOutcome(filters: WebhookFilters, delivery: FilterableDelivery): 'match' | 'no-match' | 'over-budget' {
  const budget: ConditionBudget = { left: CONDITION_BUDGET };
  const matched =
    inList(filters.docTypes, delivery.docType) &&
    inList(filters.docIds, delivery.docId) &&
    userInList(filters.userIds, delivery.triggeredBy) &&
    (filters.conditions ?? []).every((condition) => conditionHolds(condition, delivery, budget));
  return matched ? 'match' : budget.exceeded ? 'over-budget' : 'no-match';
}

export function filtersMatch(filters: WebhookFilters, delivery: FilterableDelivery): boolean {
  return filterOutcome(filters, delivery) === 'match';
}
