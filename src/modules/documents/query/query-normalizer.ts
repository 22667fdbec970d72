import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { FILTER_OPERATORS, type FilterOperator } from '../fields/field-type-handler.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import {
  AGGREGATION_KINDS,
  type AggregationKind,
  type AggregationSpec,
  type ConditionNode,
  type FilterLogic,
  type FilterNode,
  type GroupBySpec,
  type QueryAst,
  type SortDirection,
  type SortSpec,
} from './query.types.js';

export const QUERY_LIMITS = {
  maxDepth: 20,
  maxConditions: 200,
  maxSorts: 10,
  maxGroupFields: 5,
  maxAggregations: 20,
  maxListValues: 1000,
} as const;

/** Spellings accepted besides the specification's own operator names. */
const OPERATOR_ALIASES: Record<string, FilterOperator> = {
  neq: 'ne',
  not_in: 'notIn',
  nin: 'notIn',
  between: 'range',
  starts_with: 'startsWith',
  ends_with: 'endsWith',
  isEmpty: 'is_empty',
  isNotEmpty: 'is_not_empty',
};

function fail(field: string, reason: string): never {
  throw AppException.validation([{ field, reason }]);
}

function operatorOf(raw: unknown, path: string): FilterOperator {
  if (typeof raw === 'string') {
    if ((FILTER_OPERATORS as readonly string[]).includes(raw)) {
      return raw as FilterOperator;
    }
    const alias = OPERATOR_ALIASES[raw];
    if (alias) {
      return alias;
    }
  }
  return fail(
    path,
    `unknown operator ${JSON.stringify(raw)}; expected one of ${FILTER_OPERATORS.join(', ')}`,
  );
}

/** Keys of each part of a query (spec 2.12). */
const CONDITION_KEYS = new Set(['field', 'operator', 'op', 'value', 'rangeStart', 'rangeEnd']);
const STRUCTURED_GROUP_KEYS = new Set(['logic', 'conditions', 'groups']);
const SHORT_GROUP_KEYS = new Set(['and', 'or']);
const SORT_KEYS = new Set(['field', 'direction', 'order']);
const GROUP_BY_KEYS = new Set(['fields', 'aggregations']);
const AGGREGATION_KEYS = new Set(['kind', 'field']);

/** Strict mode: the first key of `raw` outside `allowed` is a VALIDATION_ERROR naming its path. */
function refuseUnknown(strict: boolean, raw: Record<string, unknown>, allowed: ReadonlySet<string>, path: string): void {
  if (!strict) {
    return;
  }
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) {
      fail(`${path}.${key}`, `unknown key (allowed: ${[...allowed].join(', ')})`);
    }
  }
}

class Normalizer {
  private conditions = 0;

  constructor(private readonly strict: boolean) {}

  condition(raw: Record<string, unknown>, path: string): ConditionNode {
    refuseUnknown(this.strict, raw, CONDITION_KEYS, path);
    this.conditions += 1;
    if (this.conditions > QUERY_LIMITS.maxConditions) {
      fail(path, `at most ${QUERY_LIMITS.maxConditions} conditions`);
    }
    if (typeof raw.field !== 'string' || raw.field === '') {
      fail(`${path}.field`, 'field is required');
    }
    const operatorKey = raw.operator === undefined && raw.op !== undefined ? 'op' : 'operator';
    const node: ConditionNode = {
      kind: 'condition',
      field: raw.field,
      operator: operatorOf(raw[operatorKey], `${path}.${operatorKey}`),
      path,
      operatorKey,
    };
    for (const key of ['value', 'rangeStart', 'rangeEnd'] as const) {
      if (raw[key] !== undefined) {
        node[key] = raw[key];
      }
    }
    return node;
  }

  /** Structured form: `{logic, conditions, groups}` (an array means AND of its items). */
  structured(raw: unknown, path: string, depth: number): FilterNode {
    if (depth > QUERY_LIMITS.maxDepth) {
      fail(path, `filters nest at most ${QUERY_LIMITS.maxDepth} levels`);
    }
    if (Array.isArray(raw)) {
      return this.structured({ logic: 'and', conditions: raw }, path, depth);
    }
    if (!isPlainObject(raw)) {
      return fail(path, 'filter group must be an object');
    }
    refuseUnknown(this.strict, raw, STRUCTURED_GROUP_KEYS, path);
    const logic =
      typeof raw.logic === 'string' ? raw.logic.toLowerCase() : raw.logic === undefined ? 'and' : null;
    if (logic !== 'and' && logic !== 'or') {
      fail(`${path}.logic`, 'logic must be "and" or "or"');
    }
    const children: FilterNode[] = [];
    for (const key of ['conditions', 'groups'] as const) {
      const list = raw[key];
      if (list === undefined || list === null) {
        continue;
      }
      if (!Array.isArray(list)) {
        fail(`${path}.${key}`, `${key} must be an array`);
      }
      list.forEach((item: unknown, index) => {
        const at = `${path}.${key}[${index}]`;
        if (!isPlainObject(item)) {
          fail(at, 'must be an object');
        }
        const isGroup =
          key === 'groups' ||
          (item.field === undefined && (item.logic !== undefined || item.conditions !== undefined));
        children.push(isGroup ? this.structured(item, at, depth + 1) : this.condition(item, at));
      });
    }
    return { kind: 'group', logic, children, path };
  }

  /** Short form: `{and: [...]}`, `{or: [...]}`, or one `{field, op, value}`. */
  short(raw: unknown, path: string, depth: number): FilterNode {
    if (Array.isArray(raw)) {
      return this.short({ and: raw }, path, depth);
    }
    if (!isPlainObject(raw)) {
      return fail(path, 'filter must be an object');
    }
    if (raw.and === undefined && raw.or === undefined) {
      return this.condition(raw, path);
    }
    if (depth > QUERY_LIMITS.maxDepth) {
      fail(path, `filters nest at most ${QUERY_LIMITS.maxDepth} levels`);
    }
    refuseUnknown(this.strict, raw, SHORT_GROUP_KEYS, path);
    const groups: FilterNode[] = [];
    for (const logic of ['and', 'or'] as const) {
      const list = raw[logic];
      if (list === undefined || list === null) {
        continue;
      }
      if (!Array.isArray(list)) {
        fail(`${path}.${logic}`, `${logic} must be an array`);
      }
      const children = list.map((item: unknown, index) =>
        this.short(item, `${path}.${logic}[${index}]`, depth + 1),
      );
      groups.push({ kind: 'group', logic, children, path: `${path}.${logic}` });
    }
    return groups.length === 1 && groups[0]
      ? groups[0]
      : { kind: 'group', logic: 'and', children: groups, path };
  }
}

function directionOf(raw: unknown, path: string): SortDirection {
  if (raw === undefined || raw === null) {
    return 'asc';
  }
  const direction = typeof raw === 'string' ? raw.toLowerCase() : '';
  return direction === 'asc' || direction === 'desc'
    ? direction
    : fail(path, 'direction must be "asc" or "desc"');
}

function sortsOf(raw: unknown, path: string, directionKey: 'direction' | 'order', strict: boolean): SortSpec[] {
  if (raw === undefined || raw === null) {
    return [];
  }
  if (typeof raw === 'string') {
    return parseSortParam(raw, path);
  }
  const list: unknown[] = Array.isArray(raw) ? raw : [raw];
  return list.map((item, index) => {
    const at = `${path}[${index}]`;
    if (!isPlainObject(item) || typeof item.field !== 'string' || item.field === '') {
      return fail(`${at}.field`, 'field is required');
    }
    refuseUnknown(strict, item, SORT_KEYS, at);
    const key =
      item[directionKey] === undefined ? (directionKey === 'order' ? 'direction' : 'order') : directionKey;
    return { field: item.field, direction: directionOf(item[key], `${at}.${key}`), path: at };
  });
}

function groupByOf(raw: unknown, strict: boolean): GroupBySpec | null {
  if (raw === undefined || raw === null) {
    return null;
  }
  const spec = Array.isArray(raw) ? { fields: raw } : raw;
  if (!isPlainObject(spec)) {
    return fail('groupBy', 'groupBy must be an object {fields, aggregations}');
  }
  refuseUnknown(strict, spec, GROUP_BY_KEYS, 'groupBy');
  const fields = spec.fields ?? [];
  if (!Array.isArray(fields) || fields.length > QUERY_LIMITS.maxGroupFields) {
    return fail(
      'groupBy.fields',
      `fields must be an array of at most ${QUERY_LIMITS.maxGroupFields} field ids`,
    );
  }
  const aggregations = spec.aggregations ?? [];
  if (!Array.isArray(aggregations) || aggregations.length > QUERY_LIMITS.maxAggregations) {
    return fail(
      'groupBy.aggregations',
      `aggregations must be an array of at most ${QUERY_LIMITS.maxAggregations}`,
    );
  }
  const groupFields = fields.map((field: unknown, index) =>
    typeof field === 'string' && field !== ''
      ? { field, path: `groupBy.fields[${index}]` }
      : fail(`groupBy.fields[${index}]`, 'must be a field id'),
  );
  const aggs = aggregations.map((item: unknown, index): AggregationSpec => {
    const at = `groupBy.aggregations[${index}]`;
    if (!isPlainObject(item) || !(AGGREGATION_KINDS as readonly unknown[]).includes(item.kind)) {
      return fail(`${at}.kind`, `kind must be one of ${AGGREGATION_KINDS.join(', ')}`);
    }
    refuseUnknown(strict, item, AGGREGATION_KEYS, at);
    const kind = item.kind as AggregationKind;
    if (item.field === undefined || item.field === null) {
      return kind === 'count' ? { kind, path: at } : fail(`${at}.field`, `${kind} needs a field`);
    }
    return typeof item.field === 'string' && item.field !== ''
      ? { kind, field: item.field, path: at }
      : fail(`${at}.field`, 'must be a field id');
  });
  if (groupFields.length === 0 && aggs.length === 0) {
    return fail('groupBy.fields', 'groupBy needs fields or aggregations');
  }
  return { fields: groupFields, aggregations: aggs };
}

/**
 * Normalizes a structured query (`filters`, `sorts`, `groupBy`) or a short-form one (`filter`, `sort`) into the
 * internal form. Both may appear: filters are ANDed and sorts concatenated (`sorts` first). Throws
 * VALIDATION_ERROR with `details[].field` such as `filters.conditions[0].operator` on a malformed query or when a
 * limit is exceeded (nesting 20, conditions 200, sorts 10, group fields 5). `page`/`pageSize` are ignored here.
 * `strict` (a client's `POST /data/query`): a key outside spec 2.12's in any group, condition, sort or groupBy is a
 * VALIDATION_ERROR too (a misspelt `orr` group or `dir` silently changed the answer); stored view configs are read
 * leniently.
 */
export function normalizeQuery(input: unknown, options: { strict?: boolean } = {}): QueryAst {
  const strict = options.strict === true;
  if (input === undefined || input === null) {
    return { filter: null, sorts: [], groupBy: null };
  }
  if (!isPlainObject(input)) {
    return fail('query', 'query must be an object');
  }
  const normalizer = new Normalizer(strict);
  const filters: FilterNode[] = [];
  if (input.filters !== undefined && input.filters !== null) {
    filters.push(normalizer.structured(input.filters, 'filters', 1));
  }
  if (input.filter !== undefined && input.filter !== null) {
    filters.push(normalizer.short(input.filter, 'filter', 1));
  }
  const sorts = [...sortsOf(input.sorts, 'sorts', 'direction', strict), ...sortsOf(input.sort, 'sort', 'order', strict)];
  if (sorts.length > QUERY_LIMITS.maxSorts) {
    fail('sorts', `at most ${QUERY_LIMITS.maxSorts} sorts`);
  }
  const filter =
    filters.length === 0
      ? null
      : filters.length === 1 && filters[0]
        ? filters[0]
        : { kind: 'group' as const, logic: 'and' as FilterLogic, children: filters, path: 'filters' };
  return { filter, sorts, groupBy: groupByOf(input.groupBy, strict) };
}

/**
 * The `sort` query parameter of `GET /data`: `field:asc`, `field:desc` or `field` (asc), comma-separated for
 * several keys. Throws VALIDATION_ERROR (`details[].field` = `sort`) when malformed.
 */
export function parseSortParam(param: string | string[] | undefined | null, path = 'sort'): SortSpec[] {
  if (param === undefined || param === null) {
    return [];
  }
  const parts = (Array.isArray(param) ? param : [param]).flatMap((item) => String(item).split(','));
  const errors: ErrorDetail[] = [];
  const sorts: SortSpec[] = [];
  parts
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .forEach((part, index) => {
      const colon = part.lastIndexOf(':');
      const field = colon < 0 ? part : part.slice(0, colon);
      const direction = colon < 0 ? 'asc' : part.slice(colon + 1).toLowerCase();
      if (field === '' || (direction !== 'asc' && direction !== 'desc')) {
        errors.push({
          field: path,
          reason: `sort must look like field:asc or field:desc, got ${JSON.stringify(part)}`,
        });
        return;
      }
      sorts.push({ field, direction, path: `${path}[${index}]` });
    });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  if (sorts.length > QUERY_LIMITS.maxSorts) {
    fail(path, `at most ${QUERY_LIMITS.maxSorts} sorts`);
  }
  return sorts;
}
