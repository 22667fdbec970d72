import type { FieldDefinition } from '../fields/field.types.js';
import { FieldResolver } from './field-resolver.js';
import { filterSql } from './filter-sql.js';
import { nowSqlAt } from './formula-sql.js';
import { groupBySql } from './group-by-sql.js';
import {
  buildSortKeys,
  cursorSelectSql,
  keysetCondition,
  orderBySql,
  sortSignatureOf,
} from './keyset-sort.js';
import { normalizeQuery } from './query-normalizer.js';
import { SqlParams } from './sql-params.js';
import type { CompiledQuery, QueryAst } from './query.types.js';

export interface CompileQueryOptions {
  /** Placeholders `$1..$paramOffset` are the caller's (e.g. `$1` = document id); compiled ones follow. */
  paramOffset?: number;
  /** A cursor position (`cursorPositionFromRow` of the previous page's last row): adds `afterWhere`. */
  after?: unknown;
  /**
   * The instant (ISO UTC, `toISOString`) NOW()/TODAY() formulas are evaluated at, else the statement's time. A
   * cursor walk passes the instant of its first page, so a sort or filter by such a formula does not move between pages.
   */
  asOf?: string;
}

/**
 * Compiles a query (structured or short form, see `normalizeQuery`, or an already normalized QueryAst) over the
 * document's fields into parameterised SQL for `document_rows r`. Nothing from the request is interpolated:
 * field ids, values, option ids and cursor values are all bound parameters.
 *
 * Parameter layout (all arrays exclude the caller's own first `paramOffset` parameters):
 * - list statement:  `WHERE <own> AND <where> [AND <afterWhere>] ORDER BY <orderBy>`, select may add `cursorSelect`
 *                    → `[...own, ...params]`
 * - count statement: `WHERE <own> AND <where>` → `[...own, ...countParams]`
 * - grouped statement: `SELECT <groupBy.select> ... WHERE <own> AND <where> GROUP BY <groupBy.groupBy>
 *                    ORDER BY <groupBy.orderBy>` (omit empty clauses) → `[...own, ...groupBy.params]`
 *
 * Throws VALIDATION_ERROR (details[].field like `filters.conditions[0].operator`) for unknown fields, operators
 * that do not fit the field type, operands of the wrong type, malformed cursors and exceeded limits.
 */
export function compileQuery(
  query: unknown,
  fields: readonly FieldDefinition[],
  opts: CompileQueryOptions = {},
): CompiledQuery {
  return compileAst(normalizeQuery(query), fields, opts);
}

/** As `compileQuery`, for an already normalized query. */
export function compileAst(
  ast: QueryAst,
  fields: readonly FieldDefinition[],
  opts: CompileQueryOptions = {},
): CompiledQuery {
  const resolver = new FieldResolver(fields, opts.asOf === undefined ? undefined : nowSqlAt(opts.asOf));
  const whereParams = new SqlParams(opts.paramOffset ?? 0);
  const where = filterSql(ast.filter, resolver, whereParams);

  const listParams = whereParams.fork();
  const sortKeys = buildSortKeys(ast.sorts, resolver, listParams);
  const afterWhere =
    opts.after === undefined || opts.after === null
      ? null
      : keysetCondition(sortKeys, opts.after, listParams);

  let groupBy: CompiledQuery['groupBy'] = null;
  if (ast.groupBy) {
    const groupParams = whereParams.fork();
    groupBy = { ...groupBySql(ast.groupBy, resolver, groupParams), params: groupParams.list };
  }

  return {
    where,
    orderBy: orderBySql(sortKeys),
    cursorSelect: cursorSelectSql(sortKeys),
    afterWhere,
    params: listParams.list,
    countParams: whereParams.list,
    sortKeys,
    sortSignature: sortSignatureOf(ast.sorts),
    groupBy,
  };
}
