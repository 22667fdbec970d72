import { AppException } from '../../../common/errors/app.exception.js';
import { emptySql } from './filter-sql.js';
import { ISO_FORMAT } from './formula-sql.js';
import { valueJsonSql } from './volatile-formula-fields.js';
import type { FieldResolver } from './field-resolver.js';
import type { SqlParams } from './sql-params.js';
import type {
  AggregationSpec,
  CompiledAggregate,
  CompiledGroupBy,
  CompiledGroupKey,
  GroupBySpec,
} from './query.types.js';

const MIN_MAX_FAMILIES = new Set(['number', 'date', 'datetime', 'text', 'id', 'select']);

/** The largest finite double (as a numeric literal, just below it): a sum or average beyond it has no JSON number. */
const MAX_DOUBLE = '1.7976931348623157e308';

/**
 * sum/avg in numeric, not double precision: a double sum past 1.8e308 raised "value out of range" (a 400 without
 * a field for a valid query). A result beyond the double range answers null, as a property formula's SUM does
 * (docs/documents.md, "Queries"); PostgreSQL computes the repeated aggregate once.
 */
function numericAggregateSql(kind: 'sum' | 'avg', typed: string): string {
  const total = `${kind}((${typed})::numeric)`;
  return `(CASE WHEN abs(${total}) <= ${MAX_DOUBLE} THEN to_jsonb((${total})::double precision) END)`;
}

function aggregateSql(spec: AggregationSpec, resolver: FieldResolver, params: SqlParams): string {
  if (spec.field === undefined) {
    return 'to_jsonb(count(*))';
  }
  const field = resolver.resolve(spec.field, `${spec.path}.field`, params);
  const family = field.handler.family;
  const typed = field.handler.sqlExpr(field.ref);
  switch (spec.kind) {
    case 'count':
      return `to_jsonb(count(*) FILTER (WHERE NOT ${emptySql(field)}))`;
    case 'sum':
    case 'avg':
      if (family !== 'number') {
        throw AppException.validation([
          {
            field: `${spec.path}.field`,
            reason: `${spec.kind} needs a numeric field, "${spec.field}" is ${field.definition.type}`,
          },
        ]);
      }
      return numericAggregateSql(spec.kind, typed.sql);
    case 'min':
    case 'max':
      if (!MIN_MAX_FAMILIES.has(family)) {
        throw AppException.validation([
          {
            field: `${spec.path}.field`,
            reason: `${spec.kind} is not supported for field type ${field.definition.type}`,
          },
        ]);
      }
      if (family === 'number') {
        return `to_jsonb(${spec.kind}((${typed.sql})::double precision))`;
      }
      // A timestamp column (createdAt, updatedAt) as rows show it (`toISOString`): to_jsonb wrote microseconds and
      // the session's offset ("…26.333065+00:00"), another text than the group key and the rows of the same value.
      return typed.cast === 'timestamptz'
        ? `to_jsonb(to_char(${spec.kind}(${typed.sql}) AT TIME ZONE 'UTC', ${ISO_FORMAT}))`
        : `to_jsonb(${spec.kind}(${typed.sql}))`;
  }
}

/**
 * GROUP BY section. Group keys are the JSON value of each field (`NULLIF(... , 'null')`, decode with
 * `storedToValue`): the stored JSON, or a volatile formula's computed value as JSON (`valueJsonSql`). Aggregates are
 * JSON too (`to_jsonb(count(*))` is a number). sum/avg need a numeric field, min/max a numeric, date, datetime or
 * text-like field; count with a field counts non-empty values. Without aggregations one `count` (rows per group) is
 * returned.
 */
export function groupBySql(
  spec: GroupBySpec,
  resolver: FieldResolver,
  params: SqlParams,
): Omit<CompiledGroupBy, 'params'> {
  const keyExprs: string[] = [];
  const keys: CompiledGroupKey[] = spec.fields.map((groupField, index) => {
    const field = resolver.resolve(groupField.field, groupField.path, params);
    const json = valueJsonSql(field);
    const family = field.handler.family;
    const typed = field.handler.sqlExpr(field.ref);
    let key = `NULLIF(${json}, 'null'::jsonb)`;
    if (typed.cast === 'timestamptz') {
      // A timestamp column keeps microseconds; rows show it to the millisecond, so that is what a group stands for
      // (two rows showing the same time used to be two groups with the same key).
      key = `to_jsonb(to_char(${typed.sql} AT TIME ZONE 'UTC', ${ISO_FORMAT}))`;
    } else if (family === 'set' || family === 'relation') {
      // A set (multi_select, collaborator, relation) keeps the order it was written in, but `eq` compares it as a
      // set: ["red","blue"] and ["blue","red"] are one group, keyed by its elements in a fixed order. References are
      // compared by row id alone, as `eq` does ({rowId} and {docType, docId, rowId} of one row are one), and keyed
      // as {rowId}. No element (an empty array) gives NULL, the empty group.
      const elements = `jsonb_array_elements(CASE WHEN jsonb_typeof(${json}) = 'array' THEN ${json} END)`;
      key =
        family === 'relation'
          ? `(SELECT jsonb_agg(jsonb_build_object('rowId', d.r) ORDER BY d.r) FROM (SELECT DISTINCT e.v ->> 'rowId' AS r FROM ${elements} AS e(v)) AS d)`
          : `(SELECT jsonb_agg(e.v ORDER BY e.v) FROM ${elements} AS e(v))`;
    }
    keyExprs.push(key);
    return { field: groupField.field, alias: `__g${index}` };
  });
  const aggregates: CompiledAggregate[] = [];
  const aggregations =
    spec.aggregations.length > 0 ? spec.aggregations : [{ kind: 'count' as const, path: 'groupBy' }];
  const aggregateExprs = aggregations.map((aggregation, index) => {
    const alias = `__a${index}`;
    aggregates.push(
      aggregation.field === undefined
        ? { kind: aggregation.kind, alias }
        : { kind: aggregation.kind, field: aggregation.field, alias },
    );
    return `${aggregateSql(aggregation, resolver, params)} AS "${alias}"`;
  });
  const select = [...keyExprs.map((expr, index) => `${expr} AS "__g${index}"`), ...aggregateExprs];
  return {
    select: select.join(', '),
    groupBy: keyExprs.join(', '),
    orderBy: keyExprs.map((expr) => `${expr} ASC NULLS LAST`).join(', '),
    keys,
    aggregates,
  };
}
