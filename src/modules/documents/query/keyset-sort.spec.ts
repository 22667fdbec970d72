import { AppException } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { cursorPositionForSeal, cursorPositionFromRow, keysetCondition, resolveCursorKeyRefs, SEQ_SORT_KEY } from './keyset-sort.js';
import { compileQuery } from './query.compiler.js';
import { SqlParams } from './sql-params.js';
import type { SortKey } from './query.types.js';

const fields: FieldDefinition[] = [
  { id: 'price', name: 'Price', type: 'number' },
  { id: 'name', name: 'Name', type: 'text' },
];

const price: SortKey = {
  field: 'price',
  direction: 'asc',
  sql: 'P',
  cast: 'double precision',
  alias: '__sk0',
};
const name: SortKey = { field: 'name', direction: 'desc', sql: 'N', cast: 'text', alias: '__sk1' };

function cursorError(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    return (error as AppException).options.details?.[0]?.field;
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('keysetCondition', () => {
  it('expands mixed directions into an OR-chain', () => {
    const params = new SqlParams(3);
    const sql = keysetCondition([price, name, SEQ_SORT_KEY], ['10', 'b', '7'], params);
    expect(sql).toBe(
      '((P > $4::double precision OR P IS NULL) OR (P = $4::double precision AND N < $5::text) OR (P = $4::double precision AND N = $5::text AND r.seq > $6::bigint))',
    );
    expect(params.list).toEqual(['10', 'b', '7']);
  });

  it('handles empty cursor values: nothing follows an empty ascending key, every value follows an empty descending key', () => {
    const params = new SqlParams();
    expect(keysetCondition([price, name, SEQ_SORT_KEY], [null, null, '7'], params)).toBe(
      '((P IS NULL AND N IS NOT NULL) OR (P IS NULL AND N IS NULL AND r.seq > $1::bigint))',
    );
    expect(keysetCondition([SEQ_SORT_KEY], ['1'], new SqlParams())).toBe('(r.seq > $1::bigint)');
  });

  it('refuses cursors that do not fit the sort', () => {
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], ['1'], new SqlParams()))).toBe('cursor');
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], ['abc', '1'], new SqlParams()))).toBe(
      'cursor',
    );
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], ['1', null], new SqlParams()))).toBe(
      'cursor',
    );
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], ['1', '1; drop'], new SqlParams()))).toBe(
      'cursor',
    );
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], 'x', new SqlParams()))).toBe('cursor');
    expect(cursorError(() => keysetCondition([price, SEQ_SORT_KEY], [1, '1'], new SqlParams()))).toBe(
      'cursor',
    );
  });

  it('accepts PostgreSQL text forms of each cast', () => {
    const at: SortKey = {
      field: 'createdAt',
      direction: 'desc',
      sql: 'r.created_at',
      cast: 'timestamptz',
      alias: 'a',
    };
    const flag: SortKey = { field: 'done', direction: 'asc', sql: 'D', cast: 'boolean', alias: 'b' };
    const json: SortKey = { field: 'calc', direction: 'asc', sql: 'J', cast: 'jsonb', alias: 'c' };
    expect(() =>
      keysetCondition(
        [at, flag, json, SEQ_SORT_KEY],
        ['2024-01-02 03:04:05.123456+00', 'true', '[1, "a"]', '12'],
        new SqlParams(),
      ),
    ).not.toThrow();
    expect(cursorError(() => keysetCondition([at, SEQ_SORT_KEY], ['yesterday', '1'], new SqlParams()))).toBe(
      'cursor',
    );
    expect(cursorError(() => keysetCondition([json, SEQ_SORT_KEY], ['{oops', '1'], new SqlParams()))).toBe(
      'cursor',
    );
  });
});

describe('cursor paging through compileQuery', () => {
  it('adds afterWhere after the list parameters and reads positions from rows', () => {
    const first = compileQuery(
      { filter: { field: 'name', op: 'is_not_empty' }, sort: 'price:desc' },
      fields,
      { paramOffset: 1 },
    );
    const position = cursorPositionFromRow({ __sk0: '9.5', __sk_seq: '4', other: 1 }, first.sortKeys);
    expect(position).toEqual(['9.5', '4']);
    const next = compileQuery({ filter: { field: 'name', op: 'is_not_empty' }, sort: 'price:desc' }, fields, {
      paramOffset: 1,
      after: position,
    });
    expect(next.countParams).toEqual(['name']);
    expect(next.params).toEqual(['name', 'price', '9.5', '4']);
    expect(next.afterWhere).toContain('< $4::double precision');
    expect(next.afterWhere).toContain('r.seq > $5::bigint');
    expect(cursorPositionFromRow({ __sk0: null, __sk_seq: 4 }, first.sortKeys)).toEqual([null, '4']);
  });
});

describe('long sort values in cursors', () => {
  it('carries a long value as its hash and reads it back from the row only while the row still has it', () => {
    const text = 'x'.repeat(5000);
    const sealed = cursorPositionForSeal(['10', text, '7']);
    expect(sealed[0]).toBe('10');
    expect(sealed[1]).toEqual({ h: expect.any(String) });
    expect(sealed[2]).toBe('7');
    expect(JSON.stringify(sealed).length).toBeLessThan(100);
    const keys = [price, name, SEQ_SORT_KEY];
    expect(resolveCursorKeyRefs(sealed, keys, { __sk0: '10', __sk1: text, __sk_seq: '7' })).toEqual(['10', text, '7']);
    expect(cursorError(() => resolveCursorKeyRefs(sealed, keys, { __sk0: '10', __sk1: `${text}!`, __sk_seq: '7' }))).toBe('cursor');
    expect(cursorError(() => resolveCursorKeyRefs(sealed, keys, null))).toBe('cursor');
  });
});
