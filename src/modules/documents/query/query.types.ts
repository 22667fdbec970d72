import type { FieldDefinition } from '../fields/field.types.js';
import type { FieldRef, FieldTypeHandler, FilterOperator, SqlCast } from '../fields/field-type-handler.js';

export type FilterLogic = 'and' | 'or';
export type SortDirection = 'asc' | 'desc';
export const AGGREGATION_KINDS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregationKind = (typeof AGGREGATION_KINDS)[number];

/** One filter condition of either query form; `path` locates it in the request (`filters.conditions[0]`). */
export interface ConditionNode {
  kind: 'condition';
  field: string;
  operator: FilterOperator;
  value?: unknown;
  rangeStart?: unknown;
  rangeEnd?: unknown;
  path: string;
  /** The request's name of the operator key: `operator` (structured form) or `op` (short form). */
  operatorKey: 'operator' | 'op';
}

export interface GroupNode {
  kind: 'group';
  logic: FilterLogic;
  children: FilterNode[];
  path: string;
}

export type FilterNode = ConditionNode | GroupNode;

export interface SortSpec {
  field: string;
  direction: SortDirection;
  path: string;
}

export interface AggregationSpec {
  kind: AggregationKind;
  field?: string;
  path: string;
}

export interface GroupBySpec {
  fields: { field: string; path: string }[];
  aggregations: AggregationSpec[];
}

/** The one internal form both query shapes normalize into. */
export interface QueryAst {
  filter: FilterNode | null;
  sorts: SortSpec[];
  groupBy: GroupBySpec | null;
}

/** A field of the query, resolved to its definition, handler and SQL location. */
export interface ResolvedField {
  definition: FieldDefinition;
  handler: FieldTypeHandler;
  ref: FieldRef;
}

/** One ORDER BY key; the last key of every query is `r.seq ASC`. */
export interface SortKey {
  /** Field id, pseudo field id, or `seq` for the final tiebreaker. */
  field: string;
  direction: SortDirection;
  sql: string;
  cast: SqlCast | 'bigint';
  /** Column alias of this key's value (as text) in `cursorSelect`. */
  alias: string;
}

/** The sort-key values of the last row of a page, as text (`cursorPositionFromRow`); the last is `seq`. */
export type CursorPosition = readonly (string | null)[];

export interface CompiledGroupKey {
  field: string;
  /** Column alias; the value is the stored JSON (decode with `storedToValue`). */
  alias: string;
}

export interface CompiledAggregate {
  kind: AggregationKind;
  field?: string;
  /** Column alias; count is a bigint (string from pg), sum/avg/min/max of numbers double precision. */
  alias: string;
}

export interface CompiledGroupBy {
  /** Select list: group keys (as JSON) then aggregates. */
  select: string;
  /** GROUP BY list; empty when only aggregations were asked for. */
  groupBy: string;
  /** ORDER BY list for the groups; empty when there are no group keys. */
  orderBy: string;
  /** Parameters of a grouped statement: WHERE's, then the group section's. */
  params: unknown[];
  keys: CompiledGroupKey[];
  aggregates: CompiledAggregate[];
}

export interface CompiledQuery {
  /** SQL boolean expression over `r`; `TRUE` without filters. */
  where: string;
  /** ORDER BY list (without the keywords), ending with `r.seq ASC`. */
  orderBy: string;
  /** Select list exposing each sort key's value as text under its alias, for building the next cursor. */
  cursorSelect: string;
  /** Keyset condition "after the cursor position" when `after` was given, else null. */
  afterWhere: string | null;
  /** Parameters of a list statement using `where`, `orderBy`, `cursorSelect` and `afterWhere`. */
  params: unknown[];
  /** Parameters of a statement using `where` alone (a count). */
  countParams: unknown[];
  sortKeys: SortKey[];
  /** Identifies the sort; put it in the cursor so a cursor of another sort is refused. */
  sortSignature: string;
  groupBy: CompiledGroupBy | null;
}
