import { createHash } from 'node:crypto';
import { AppException } from '../../../common/errors/app.exception.js';
import type { SqlCast } from '../fields/field-type-handler.js';
import { assertNever } from '../../../common/assert-never.js';
import type { FieldResolver } from './field-resolver.js';
import type { SqlParams } from './sql-params.js';
import type { SortKey, SortSpec } from './query.types.js';

/** The tiebreaker every ORDER BY ends with: insertion order, unique per document. */
export const SEQ_SORT_KEY: SortKey = {
  field: 'seq',
  direction: 'asc',
  sql: 'r.seq',
  cast: 'bigint',
  alias: '__sk_seq',
};

/** Sort keys of the requested sorts followed by `r.seq ASC`. Field ids and option lists are bound parameters. */
export function buildSortKeys(
  sorts: readonly SortSpec[],
  resolver: FieldResolver,
  params: SqlParams,
): SortKey[] {
  const keys = sorts.map((sort, index): SortKey => {
    const field = resolver.resolve(sort.field, `${sort.path}.field`, params);
    const typed = field.handler.sortExpr(field.ref, field.definition, (value) => params.add(value));
    return {
      field: sort.field,
      direction: sort.direction,
      sql: typed.sql,
      cast: typed.cast,
      alias: `__sk${index}`,
    };
  });
  return [...keys, SEQ_SORT_KEY];
}

/**
 * ORDER BY list. Empty values sort last ascending and first descending (`ASC NULLS LAST` / `DESC NULLS FIRST`,
 * i.e. empty counts as the greatest value either way); the last key is always `r.seq ASC`.
 */
export function orderBySql(keys: readonly SortKey[]): string {
  return keys
    .map((key) =>
      key === SEQ_SORT_KEY
        ? 'r.seq ASC'
        : `${key.sql} ${key.direction === 'asc' ? 'ASC NULLS LAST' : 'DESC NULLS FIRST'}`,
    )
    .join(', ');
}

/** Select list with each sort key's value as text, under the key's alias (`(expr)::text AS "__sk0"`). */
export function cursorSelectSql(keys: readonly SortKey[]): string {
  return keys.map((key) => `(${key.sql})::text AS "${key.alias}"`).join(', ');
}

/** The cursor position of a row selected with `cursorSelect`. */
export function cursorPositionFromRow(
  row: Record<string, unknown>,
  keys: readonly SortKey[],
): (string | null)[] {
  return keys.map((key) => {
    const value = row[key.alias];
    return value === null || value === undefined ? null : String(value);
  });
}

/** Short stable id of a sort, to bind cursors to the sort they were made for. */
export function sortSignatureOf(sorts: readonly SortSpec[]): string {
  const text = JSON.stringify(sorts.map((sort) => [sort.field, sort.direction]));
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

const NUMBER_TEXT = /^(-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?|NaN|-?Infinity)$/i;
const INTEGER_TEXT = /^-?\d{1,19}$/;
const TIMESTAMP_TEXT =
  /^(\d{4,}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2}(:?\d{2})?)?)?( BC)?|-?infinity)$/i;

/** True when PostgreSQL can cast `text` to `cast`, so a forged cursor gives a VALIDATION_ERROR, not a 500. */
function castable(text: string, cast: SqlCast): boolean {
  switch (cast) {
    case 'text':
      return true;
    case 'double precision':
      return NUMBER_TEXT.test(text);
    case 'bigint':
    case 'integer':
      return INTEGER_TEXT.test(text) && (cast === 'bigint' || Math.abs(Number(text)) <= 2147483647);
    case 'boolean':
      return text === 'true' || text === 'false';
    case 'timestamptz':
      return TIMESTAMP_TEXT.test(text);
    case 'jsonb':
      try {
        JSON.parse(text);
        return true;
      } catch {
        return false;
      }
    default:
      return assertNever(cast);
  }
}

function invalidCursor(reason: string): never {
  throw AppException.validation([{ field: 'cursor', reason }]);
}

/**
 * The keyset condition "strictly after `position`" for `keys` (built by `buildSortKeys`), as an OR-chain:
 * `after(k0) OR (eq(k0) AND after(k1)) OR ... OR (eq(k0..kn-1) AND r.seq > s)`, honouring each key's direction
 * and the null placement of `orderBySql` (empty = greatest). Throws VALIDATION_ERROR (`cursor`) when the position
 * does not fit the keys.
 */
export function keysetCondition(keys: readonly SortKey[], position: unknown, params: SqlParams): string {
  if (!Array.isArray(position) || position.length !== keys.length) {
    return invalidCursor('cursor does not match the sort');
  }
  const values = position.map((value: unknown, index) => {
    const key = keys[index] as SortKey;
    if (value === null && key !== SEQ_SORT_KEY) {
      return null;
    }
    if (typeof value !== 'string' || value.length > 10_000 || !castable(value, key.cast)) {
      return invalidCursor('cursor does not match the sort');
    }
    return `${params.add(value)}::${key.cast}`;
  });

  const equal = (index: number): string => {
    const key = keys[index] as SortKey;
    const value = values[index];
    return value === null || value === undefined ? `${key.sql} IS NULL` : `${key.sql} = ${value}`;
  };
  const after = (index: number): string | null => {
    const key = keys[index] as SortKey;
    const value = values[index];
    if (value === null || value === undefined) {
      // Empty is the greatest value: nothing follows it ascending; every non-empty value follows it descending.
      return key.direction === 'asc' ? null : `${key.sql} IS NOT NULL`;
    }
    if (key === SEQ_SORT_KEY) {
      return `${key.sql} > ${value}`;
    }
    return key.direction === 'asc'
      ? `(${key.sql} > ${value} OR ${key.sql} IS NULL)`
      : `${key.sql} < ${value}`;
  };

  const branches: string[] = [];
  for (let index = 0; index < keys.length; index += 1) {
    const step = after(index);
    if (step === null) {
      continue;
    }
    const prefix = Array.from({ length: index }, (_, i) => equal(i));
    branches.push(prefix.length === 0 ? step : `(${[...prefix, step].join(' AND ')})`);
  }
  return branches.length === 0 ? 'FALSE' : `(${branches.join(' OR ')})`;
}
