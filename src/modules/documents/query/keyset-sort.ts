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
    // No length bound here: a sealed cursor carries at most CURSOR_INLINE_MAX_BYTES per value, and a longer value
    // comes from its row (resolveCursorKeyRefs); a bound refused the cursors the service itself issued.
    if (typeof value !== 'string' || !castable(value, key.cast)) {
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

/**
 * A sort-key value longer than this (as JSON, in bytes) travels in a cursor as a reference `{h}` instead: the
 * cursor is sealed and base64-encoded twice (about 1.8 bytes per byte), and carrying a whole long text made cursors
 * no client could send back (a 12,000-character text gave a 21,532-character `nextCursor`: `431` in a query
 * string, refused in a body). Ten keys of 128 bytes keep a cursor under the 4096 characters `GET /data` accepts.
 */
export const CURSOR_INLINE_MAX_BYTES = 128;

/** A long sort-key value in a cursor: the hash of its text, resolved again from the row when the cursor is used. */
export interface CursorKeyRef {
  h: string;
}

export function isCursorKeyRef(value: unknown): value is CursorKeyRef {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as CursorKeyRef).h === 'string';
}

function keyHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** The position as a cursor carries it: every value longer than CURSOR_INLINE_MAX_BYTES becomes a `{h}` reference. */
export function cursorPositionForSeal(position: readonly (string | null)[]): (string | null | CursorKeyRef)[] {
  return position.map((value, index) =>
    value !== null && index < position.length - 1 && Buffer.byteLength(JSON.stringify(value)) > CURSOR_INLINE_MAX_BYTES
      ? { h: keyHash(value) }
      : value,
  );
}

/**
 * Replaces the `{h}` references of an opened cursor position with the values `row` (the sort keys of the row the
 * cursor continues after, read again by its `seq`) has now. When that row is gone or its value changed, the position
 * is lost: VALIDATION_ERROR on `cursor` (start again) rather than pages that skip or repeat rows.
 */
export function resolveCursorKeyRefs(
  position: readonly unknown[],
  keys: readonly SortKey[],
  row: Record<string, unknown> | null,
): unknown[] {
  return position.map((value, index) => {
    if (!isCursorKeyRef(value)) {
      return value;
    }
    const key = keys[index];
    const current = key && row ? row[key.alias] : undefined;
    if (typeof current !== 'string' || keyHash(current) !== value.h) {
      return invalidCursor('the row this cursor continues after was changed or deleted; start again without a cursor');
    }
    return current;
  });
}
