import { AppException } from '../../../common/errors/app.exception.js';
import type { FilterOperator, SqlCast } from '../fields/field-type-handler.js';
import { assertNever } from '../../../common/assert-never.js';
import { isPlainObject, NUL_REASON, validationDetailsOf } from '../fields/field-value.utils.js';
import type { StoredValue } from '../fields/field.types.js';
import type { FieldResolver } from './field-resolver.js';
import { valueJsonSql } from './volatile-formula-fields.js';
import { QUERY_LIMITS } from './query-normalizer.js';
import type { SqlParams } from './sql-params.js';
import type { ConditionNode, FilterNode, ResolvedField } from './query.types.js';

type Operand = string | number | boolean;

function fail(field: string, reason: string): never {
  throw AppException.validation([{ field, reason }]);
}

/** Escapes `\`, `%` and `_` so user text matches literally inside an ILIKE pattern. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * Empty: missing key, JSON null, "", [] or {} (for a column: NULL). A volatile formula is empty when its computed
 * value is (`valueJsonSql`): it has no stored value.
 */
export function emptySql(field: Pick<ResolvedField, 'handler' | 'ref'>): string {
  if (field.ref.kind === 'column') {
    return `(${field.ref.column} IS NULL)`;
  }
  return `COALESCE(${valueJsonSql(field)} IN ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb), TRUE)`;
}

/**
 * A condition that holds for every row or for none (`in []`, `notIn []`, `contains []`). It still mentions the
 * field's expression: the field id is already a bound parameter, and PostgreSQL refuses a statement with a
 * parameter it never uses. The planner folds `x IS NULL AND FALSE` to FALSE (and `OR TRUE` to TRUE).
 */
function constantSql(value: boolean, expr: string): string {
  return value ? `(${expr} IS NULL OR TRUE)` : `(${expr} IS NULL AND FALSE)`;
}

class ConditionCompiler {
  constructor(
    private readonly cond: ConditionNode,
    private readonly field: ResolvedField,
    private readonly params: SqlParams,
  ) {}

  private operand(value: unknown, path: string): Operand {
    if (value === undefined || value === null) {
      return fail(path, 'value is required');
    }
    const result = this.field.handler.operand(value, this.field.definition);
    if (!result.ok) {
      return fail(path, result.reason);
    }
    return typeof result.value === 'string' && result.value.includes('\u0000')
      ? fail(path, NUL_REASON)
      : result.value;
  }

  private list(path: string): Operand[] {
    const value = this.cond.value;
    if (!Array.isArray(value)) {
      return fail(path, `${this.cond.operator} needs an array value`);
    }
    if (value.length > QUERY_LIMITS.maxListValues) {
      return fail(path, `at most ${QUERY_LIMITS.maxListValues} values`);
    }
    return value.map((item: unknown, index) => this.operand(item, `${path}[${index}]`));
  }

  /** One value or an array of values (set and relation operators). */
  private oneOrMany(path: string): Operand[] {
    return Array.isArray(this.cond.value) ? this.list(path) : [this.operand(this.cond.value, path)];
  }

  /**
   * The items of a set operand given as the Value a read answers — `{multiSelect: [{id}, …]}`, `{collaborators:
   * [{id}]}`, `{relation: [{rowId}]}` — read as a write of the field reads it (docs/values.md: operands accept what a
   * write accepts); null when the operand is not such a Value.
   */
  private valueItems(path: string, relation: boolean): Operand[] | null {
    const value = this.cond.value;
    if (!isPlainObject(value) || !Object.values(value).some(Array.isArray)) {
      return null;
    }
    let stored: StoredValue;
    try {
      stored = this.field.handler.parse(value, this.field.definition);
    } catch (error) {
      return fail(path, validationDetailsOf(error)?.[0]?.reason ?? 'invalid value');
    }
    const items = stored === null ? [] : Array.isArray(stored) ? stored : [stored];
    if (items.length > QUERY_LIMITS.maxListValues) {
      return fail(path, `at most ${QUERY_LIMITS.maxListValues} values`);
    }
    return items.map((item) => {
      const id = relation && isPlainObject(item) ? item.rowId : item;
      return typeof id === 'string' ? id : fail(path, relation ? 'expected row references' : 'expected ids');
    });
  }

  private bounds(): [unknown, unknown] {
    const { value, rangeStart, rangeEnd } = this.cond;
    if (rangeStart !== undefined || rangeEnd !== undefined) {
      return [rangeStart, rangeEnd];
    }
    if (Array.isArray(value) && value.length === 2) {
      return [value[0], value[1]];
    }
    if (isPlainObject(value)) {
      return [value.start ?? value.from, value.end ?? value.to];
    }
    return fail(
      `${this.cond.path}.rangeStart`,
      'range needs rangeStart and/or rangeEnd (or value [start, end])',
    );
  }

  private bind(value: Operand | Operand[], cast: SqlCast, array = false): string {
    return `${this.params.add(value)}::${cast}${array ? '[]' : ''}`;
  }

  /**
   * A timestamp column (createdAt, updatedAt, created_time, updated_time) holds microseconds, but rows show it with
   * milliseconds (`toISOString`) and operands are read to the millisecond: an operand names the whole millisecond
   * [t, t + 1 ms), so `eq` with the time a row shows finds that row. The column itself is compared (no function
   * around it), so an index on it still serves the filter.
   */
  private timestamp(op: FilterOperator, expr: string): string {
    const valuePath = `${this.cond.path}.value`;
    const from = (value: Operand): string => this.bind(value, 'timestamptz');
    const until = (value: Operand): string => `(${from(value)} + interval '1 millisecond')`;
    const within = (value: Operand): string => {
      const at = from(value);
      return `(${expr} >= ${at} AND ${expr} < ${at} + interval '1 millisecond')`;
    };
    switch (op) {
      case 'eq':
        return within(this.operand(this.cond.value, valuePath));
      case 'ne':
        return `(NOT COALESCE(${within(this.operand(this.cond.value, valuePath))}, FALSE))`;
      case 'in':
      case 'notIn': {
        const list = this.list(valuePath);
        if (list.length === 0) {
          return constantSql(op === 'notIn', expr);
        }
        const any = `EXISTS (SELECT 1 FROM unnest(${this.bind(list, 'timestamptz', true)}) AS q(v) WHERE ${expr} >= q.v AND ${expr} < q.v + interval '1 millisecond')`;
        return op === 'in' ? any : `(NOT ${any})`;
      }
      case 'gt':
        return `(${expr} >= ${until(this.operand(this.cond.value, valuePath))})`;
      case 'gte':
        return `(${expr} >= ${from(this.operand(this.cond.value, valuePath))})`;
      case 'lt':
        return `(${expr} < ${from(this.operand(this.cond.value, valuePath))})`;
      case 'lte':
        return `(${expr} < ${until(this.operand(this.cond.value, valuePath))})`;
      case 'range': {
        const [start, end] = this.bounds();
        const parts: string[] = [];
        if (start !== undefined && start !== null) {
          parts.push(`${expr} >= ${from(this.operand(start, `${this.cond.path}.rangeStart`))}`);
        }
        if (end !== undefined && end !== null) {
          parts.push(`${expr} < ${until(this.operand(end, `${this.cond.path}.rangeEnd`))}`);
        }
        return parts.length === 0
          ? fail(`${this.cond.path}.rangeStart`, 'range needs rangeStart and/or rangeEnd')
          : `(${parts.join(' AND ')})`;
      }
      case 'contains':
      case 'startsWith':
      case 'endsWith':
      case 'is_empty':
      case 'is_not_empty':
        return fail(`${this.cond.path}.${this.cond.operatorKey}`, `operator "${op}" is not supported here`);
      default:
        return assertNever(op);
    }
  }

  /** Families compared as one typed scalar: text, id, select, number, date, datetime, boolean. */
  scalar(op: FilterOperator, expr: string, cast: SqlCast): string {
    const valuePath = `${this.cond.path}.value`;
    if (cast === 'timestamptz') {
      return this.timestamp(op, expr);
    }
    switch (op) {
      case 'eq':
        return `(${expr} = ${this.bind(this.operand(this.cond.value, valuePath), cast)})`;
      case 'ne':
        return `(${expr} IS DISTINCT FROM ${this.bind(this.operand(this.cond.value, valuePath), cast)})`;
      case 'in':
      case 'notIn': {
        const list = this.list(valuePath);
        if (list.length === 0) {
          return constantSql(op === 'notIn', expr);
        }
        const any = `${expr} = ANY(${this.bind(list, cast, true)})`;
        return op === 'in' ? `COALESCE(${any}, FALSE)` : `(NOT COALESCE(${any}, FALSE))`;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const symbol = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
        return `(${expr} ${symbol} ${this.bind(this.operand(this.cond.value, valuePath), cast)})`;
      }
      case 'range': {
        const [start, end] = this.bounds();
        const parts: string[] = [];
        if (start !== undefined && start !== null) {
          parts.push(`${expr} >= ${this.bind(this.operand(start, `${this.cond.path}.rangeStart`), cast)}`);
        }
        if (end !== undefined && end !== null) {
          parts.push(`${expr} <= ${this.bind(this.operand(end, `${this.cond.path}.rangeEnd`), cast)}`);
        }
        return parts.length === 0
          ? fail(`${this.cond.path}.rangeStart`, 'range needs rangeStart and/or rangeEnd')
          : `(${parts.join(' AND ')})`;
      }
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        const text = this.operand(this.cond.value, valuePath);
        if (typeof text !== 'string') {
          return fail(valuePath, `${op} needs a string value`);
        }
        const escaped = escapeLike(text);
        const pattern =
          op === 'contains' ? `%${escaped}%` : op === 'startsWith' ? `${escaped}%` : `%${escaped}`;
        return `((${expr})::text ILIKE ${this.bind(pattern, 'text')} ESCAPE '\\')`;
      }
      case 'is_empty':
      case 'is_not_empty':
        return fail(
          `${this.cond.path}.${this.cond.operatorKey}`,
          'internal: empty operators are handled first',
        );
      default:
        return assertNever(op);
    }
  }

  /** JSON arrays of ids (multi_select, collaborator) or of `{rowId}` references (relation). */
  array(op: FilterOperator, json: string, relation: boolean): string {
    const valuePath = `${this.cond.path}.value`;
    const items = this.valueItems(valuePath, relation) ?? this.oneOrMany(valuePath);
    const element = (value: string): string =>
      relation ? `jsonb_build_array(jsonb_build_object('rowId', ${value}))` : `jsonb_build_array(${value})`;
    const asJson = (ids: Operand[]): string =>
      JSON.stringify(relation ? ids.map((rowId) => ({ rowId })) : ids);
    switch (op) {
      case 'contains':
        return items.length === 0
          ? constantSql(true, json)
          : `COALESCE(${json} @> ${this.bind(asJson(items), 'jsonb')}, FALSE)`;
      case 'in':
      case 'notIn': {
        if (items.length === 0) {
          return constantSql(op === 'notIn', json);
        }
        const exists = `EXISTS (SELECT 1 FROM unnest(${this.bind(items, 'text', true)}) AS q(v) WHERE ${json} @> ${element('q.v')})`;
        return op === 'in' ? exists : `(NOT ${exists})`;
      }
      case 'eq':
      case 'ne': {
        if (items.length === 0) {
          return op === 'eq' ? emptySql(this.field) : `(NOT ${emptySql(this.field)})`;
        }
        const set = this.bind(asJson(items), 'jsonb');
        // A stored reference may carry docType/docId besides its rowId: relations compare the sets of row ids.
        const same = relation
          ? `COALESCE(CASE WHEN jsonb_typeof(${json}) = 'array' THEN ${json} @> ${set} AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${json}) AS e(v) WHERE NOT ${set} @> ${element(`e.v -> 'rowId'`)}) END, FALSE)`
          : `COALESCE(jsonb_typeof(${json}) = 'array' AND ${json} @> ${set} AND ${set} @> ${json}, FALSE)`;
        return op === 'eq' ? same : `(NOT ${same})`;
      }
      case 'range':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
      case 'startsWith':
      case 'endsWith':
      case 'is_empty':
      case 'is_not_empty':
        return fail(`${this.cond.path}.${this.cond.operatorKey}`, `operator "${op}" is not supported here`);
      default:
        return assertNever(op);
    }
  }

  /**
   * lookup / formula: JSON equality (or list membership), numeric or text comparisons by operand type. A list (a
   * lookup's value) matches when one of its elements does, for equality and for ranges alike.
   */
  dynamic(op: FilterOperator, json: string): string {
    const valuePath = `${this.cond.path}.value`;
    const matches = (value: string): string =>
      `(${json} = ${value} OR (jsonb_typeof(${json}) = 'array' AND ${json} @> jsonb_build_array(${value})))`;
    // Each element of a list, or the value itself; a range's bounds hold for one and the same element.
    const anyElement = (test: (element: string) => string): string =>
      `EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${json}) = 'array' THEN ${json} ELSE jsonb_build_array(${json}) END) AS e(v) WHERE ${test('e.v')})`;
    switch (op) {
      case 'eq':
      case 'ne': {
        const same = `COALESCE(${matches(this.bind(JSON.stringify(this.operand(this.cond.value, valuePath)), 'jsonb'))}, FALSE)`;
        return op === 'eq' ? same : `(NOT ${same})`;
      }
      case 'in':
      case 'notIn': {
        const list = this.list(valuePath);
        if (list.length === 0) {
          return constantSql(op === 'notIn', json);
        }
        const values = this.bind(
          list.map((item) => JSON.stringify(item)),
          'jsonb',
          true,
        );
        const exists = `EXISTS (SELECT 1 FROM unnest(${values}) AS q(v) WHERE ${matches('q.v')})`;
        return op === 'in' ? exists : `(NOT ${exists})`;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
      case 'range': {
        // Kinds of the operands as read ({number: 4} is 4), as `scalar` below reads them again.
        const samples =
          op === 'range'
            ? this.bounds().flatMap((bound, index) =>
                bound === undefined || bound === null
                  ? []
                  : [this.operand(bound, `${this.cond.path}.${index === 0 ? 'rangeStart' : 'rangeEnd'}`)],
              )
            : [this.operand(this.cond.value, valuePath)];
        const kinds = new Set(samples.map((sample) => typeof sample));
        if (kinds.size === 1 && kinds.has('number')) {
          return anyElement((element) =>
            this.scalar(
              op,
              `(CASE WHEN jsonb_typeof(${element}) = 'number' THEN (${element})::double precision END)`,
              'double precision',
            ),
          );
        }
        if (kinds.size === 1 && kinds.has('string')) {
          return anyElement((element) =>
            this.scalar(
              op,
              `(CASE WHEN jsonb_typeof(${element}) = 'string' THEN ${element} #>> '{}' END)`,
              'text',
            ),
          );
        }
        return fail(valuePath, `${op} needs number or string values of one type`);
      }
      case 'contains':
      case 'startsWith':
      case 'endsWith':
        // Text of one scalar element at a time: a list's JSON text would let `contains ","` or a pattern spanning
        // two elements match.
        return anyElement((element) =>
          this.scalar(
            op,
            `(CASE WHEN jsonb_typeof(${element}) IN ('string', 'number', 'boolean') THEN ${element} #>> '{}' END)`,
            'text',
          ),
        );
      case 'is_empty':
      case 'is_not_empty':
        return fail(
          `${this.cond.path}.${this.cond.operatorKey}`,
          'internal: empty operators are handled first',
        );
      default:
        return assertNever(op);
    }
  }
}

function conditionSql(cond: ConditionNode, field: ResolvedField, params: SqlParams): string {
  const { handler, definition, ref } = field;
  let op = cond.operator;
  if ((op === 'eq' || op === 'ne') && cond.value === null) {
    op = op === 'eq' ? 'is_empty' : 'is_not_empty';
  }
  if (!handler.operators.includes(op)) {
    return fail(
      `${cond.path}.${cond.operatorKey}`,
      `operator "${op}" is not supported for field type "${definition.type}"`,
    );
  }
  if (op === 'is_empty' || op === 'is_not_empty') {
    return op === 'is_empty' ? emptySql(field) : `(NOT ${emptySql(field)})`;
  }
  const compiler = new ConditionCompiler(cond, field, params);
  const family = handler.family;
  switch (family) {
    case 'text':
    case 'id':
    case 'select':
    case 'number':
    case 'date':
    case 'datetime':
    case 'boolean': {
      const typed = handler.sqlExpr(ref);
      return compiler.scalar(op, typed.sql, typed.cast);
    }
    case 'set':
    case 'relation':
      return compiler.array(op, valueJsonSql(field), family === 'relation');
    case 'dynamic':
      return compiler.dynamic(op, valueJsonSql(field));
    case 'attachment':
      return fail(
        `${cond.path}.${cond.operatorKey}`,
        `operator "${op}" is not supported for field type "${definition.type}"`,
      );
    default:
      return assertNever(family);
  }
}

/** Compiles a filter tree into one SQL boolean expression over `r`; empty groups are TRUE. */
export function filterSql(node: FilterNode | null, resolver: FieldResolver, params: SqlParams): string {
  if (node === null) {
    return 'TRUE';
  }
  if (node.kind === 'condition') {
    return conditionSql(node, resolver.resolve(node.field, `${node.path}.field`, params), params);
  }
  const parts = node.children.map((child) => filterSql(child, resolver, params));
  if (parts.length === 0) {
    return 'TRUE';
  }
  return parts.length === 1 && parts[0]
    ? parts[0]
    : `(${parts.join(node.logic === 'and' ? ' AND ' : ' OR ')})`;
}
