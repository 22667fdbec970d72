import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, StoredValue, SystemColumn, Value } from './field.types.js';
import type { RuleKind } from './validation-rules.js';

/** Filter operators of both query forms (interface specification section 2.12). */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'in',
  'notIn',
  'range',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'startsWith',
  'endsWith',
  'is_empty',
  'is_not_empty',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/**
 * How the query compiler turns a field into SQL. Field types sharing a family share the SQL of every operator:
 * - `text`: string, compared as text; contains/startsWith/endsWith are case-insensitive (ILIKE).
 * - `id`: a user id (user, created_by, updated_by); equality only.
 * - `select`: one option id; equality on ids; sorts by the option order of the definition.
 * - `number`: double precision (bigint for the `version` column).
 * - `date`: `YYYY-MM-DD` strings, whose text order is date order.
 * - `datetime`: `YYYY-MM-DDTHH:mm:ss.sssZ` strings (text order is time order), or a timestamptz column.
 * - `boolean`: a missing value counts as false.
 * - `set`: a JSON array of ids (multi_select, collaborator).
 * - `relation`, `attachment`: JSON arrays of objects.
 * - `dynamic`: any JSON (lookup, formula): compared as JSON, numbers numerically, strings as text.
 */
export type QueryFamily =
  | 'text'
  | 'id'
  | 'select'
  | 'number'
  | 'date'
  | 'datetime'
  | 'boolean'
  | 'set'
  | 'relation'
  | 'attachment'
  | 'dynamic';

/** The SQL type an expression has; bound parameters compared with it are cast to the same type. */
export type SqlCast =
  'text' | 'double precision' | 'bigint' | 'integer' | 'boolean' | 'timestamptz' | 'jsonb';

/**
 * Where a field's value lives. `json`: a key of `r."values"`; `key` is the placeholder (such as `$3`) of a bound
 * parameter holding the field id, never the id itself. `column`: a system column of `document_rows r`.
 */
export type FieldRef = { kind: 'json'; key: string } | { kind: 'column'; column: SystemColumn };

/** A typed SQL expression built only from whitelisted SQL and placeholders. */
export interface TypedSql {
  sql: string;
  cast: SqlCast;
}

export type OperandResult = { ok: true; value: string | number | boolean } | { ok: false; reason: string };

export type ConvertResult = { ok: true; value: StoredValue } | { ok: false };

/** A stored value described independently of its field type, the source side of a type change. */
export interface PortableValue {
  kind:
    | 'text'
    | 'number'
    | 'boolean'
    | 'date'
    | 'datetime'
    | 'select'
    | 'users'
    | 'attachments'
    | 'relations'
    | 'json';
  /** Human text, used when converting to text. */
  text: string;
  number?: number;
  boolean?: boolean;
  /** `date`: `YYYY-MM-DD`; `datetime`: full ISO UTC. */
  iso?: string;
  /** `select`: option ids with their display labels; `users`: user ids. */
  items?: { id: string; label: string }[];
  stored: StoredValue;
}

/** One class per field type (or family of identical types); the registry maps every FieldType to one. */
export interface FieldTypeHandler {
  /** Lookup, rollup, formula, auto_number and the created/updated fields: values are never written by clients. */
  readonly computed: boolean;
  readonly family: QueryFamily;
  /** Operators a filter may use on this type. */
  readonly operators: readonly FilterOperator[];
  /** How `validations` read this type's values. */
  readonly ruleKind: RuleKind;
  /** When set, the field is read from this system column rather than from `values`. */
  readonly systemColumn?: SystemColumn;

  /** A Value or lenient raw form → stored form; null for empty. Throws VALIDATION_ERROR. */
  parse(input: unknown, field: FieldDefinition): StoredValue | null;
  /** Stored form (never null) → canonical Value. */
  toValue(stored: StoredValue, field: FieldDefinition): Value;
  /** Applies `field.validations` to a non-empty stored value; one detail per failed rule. */
  validateRules(stored: StoredValue, field: FieldDefinition): ErrorDetail[];
  /** Describes a stored value for a type change. */
  toPortable(stored: StoredValue, field: FieldDefinition): PortableValue;
  /** Builds this type's stored value from another field's value; `{ok: false}` when not meaningful. */
  convertFrom(source: PortableValue, toField: FieldDefinition): ConvertResult;
  /** The typed scalar expression of the value, for comparisons. */
  sqlExpr(ref: FieldRef): TypedSql;
  /** The ORDER BY expression; `bind` adds a parameter and returns its placeholder. Usually `sqlExpr`. */
  sortExpr(ref: FieldRef, field: FieldDefinition, bind: (value: unknown) => string): TypedSql;
  /** One filter operand → the form compared with `sqlExpr` (stored form, option id, row id ...). */
  operand(value: unknown, field: FieldDefinition): OperandResult;
}

/** The raw JSON of a field: `(r."values" -> $3::text)`, or the column as JSON. */
export function jsonSql(ref: FieldRef): string {
  return ref.kind === 'json' ? `(r."values" -> ${ref.key}::text)` : `to_jsonb(${ref.column})`;
}

/** The value as text: `(r."values" ->> $3::text)`, or the column cast to text. */
export function textSql(ref: FieldRef): string {
  return ref.kind === 'json' ? `(r."values" ->> ${ref.key}::text)` : `(${ref.column})::text`;
}

/** The JSON value cast to `cast` when its JSON type is `jsonType`, else NULL (never a cast error). */
export function guardedJsonCast(ref: FieldRef, jsonType: 'number' | 'boolean', cast: SqlCast): string {
  const json = jsonSql(ref);
  return `(CASE WHEN jsonb_typeof(${json}) = '${jsonType}' THEN (${json})::${cast} END)`;
}

export const OPS_EMPTY: readonly FilterOperator[] = ['is_empty', 'is_not_empty'];
export const OPS_EQUALITY: readonly FilterOperator[] = ['eq', 'ne', 'in', 'notIn', ...OPS_EMPTY];
export const OPS_ORDERED: readonly FilterOperator[] = [...OPS_EQUALITY, 'gt', 'gte', 'lt', 'lte', 'range'];
export const OPS_TEXT: readonly FilterOperator[] = [...OPS_ORDERED, 'contains', 'startsWith', 'endsWith'];
export const OPS_SET: readonly FilterOperator[] = ['eq', 'ne', 'contains', 'in', 'notIn', ...OPS_EMPTY];
