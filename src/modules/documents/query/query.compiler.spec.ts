import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { compileQuery } from './query.compiler.js';
import { escapeLike } from './filter-sql.js';

const EVIL = "x'); drop table document_rows; --";

const fields: FieldDefinition[] = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'price', name: 'Price', type: 'currency' },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'at', name: 'At', type: 'datetime' },
  { id: 'done', name: 'Done', type: 'boolean' },
  {
    id: 'status',
    name: 'Status',
    type: 'single_select',
    selectOptions: [{ id: 'todo', label: 'To do' }, { id: 'done' }],
  },
  { id: 'tags', name: 'Tags', type: 'multi_select', selectOptions: [{ id: 'a' }, { id: 'b' }] },
  { id: 'owner', name: 'Owner', type: 'user' },
  { id: 'rel', name: 'Rel', type: 'relation' },
  { id: 'files', name: 'Files', type: 'attachment' },
  { id: 'calc', name: 'Calc', type: 'formula' },
  { id: 'stars', name: 'Stars', type: 'rating' },
  { id: EVIL, name: 'Evil', type: 'text' },
];

function where(filter: unknown, offset = 1) {
  const compiled = compileQuery({ filter }, fields, { paramOffset: offset });
  return { sql: compiled.where, params: compiled.countParams };
}

function details(fn: () => unknown): ErrorDetail[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    expect((error as AppException).code).toBe('VALIDATION_ERROR');
    return (error as AppException).options.details ?? [];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('compileQuery: filters', () => {
  it('compiles nothing to TRUE with the seq tiebreaker', () => {
    const compiled = compileQuery({}, fields, { paramOffset: 1 });
    expect(compiled.where).toBe('TRUE');
    expect(compiled.orderBy).toBe('r.seq ASC');
    expect(compiled.params).toEqual([]);
    expect(compiled.afterWhere).toBeNull();
    expect(compiled.groupBy).toBeNull();
  });

  it('binds the field id and the value after the caller offset', () => {
    expect(where({ field: 'name', op: 'eq', value: 'Apple' })).toEqual({
      sql: `((r."values" ->> $2::text) = $3::text)`,
      params: ['name', 'Apple'],
    });
    expect(where({ field: 'name', op: 'eq', value: 'Apple' }, 0).sql).toBe(
      `((r."values" ->> $1::text) = $2::text)`,
    );
  });

  it('compiles text operators case-insensitively with escaped wildcards', () => {
    expect(where({ field: 'name', op: 'contains', value: '50%_\\' })).toEqual({
      sql: `(((r."values" ->> $2::text))::text ILIKE $3::text ESCAPE '\\')`,
      params: ['name', '%50\\%\\_\\\\%'],
    });
    expect(where({ field: 'name', op: 'startsWith', value: 'a' }).params[1]).toBe('a%');
    expect(where({ field: 'name', op: 'endsWith', value: 'a' }).params[1]).toBe('%a');
    expect(escapeLike('a%b_c\\d')).toBe('a\\%b\\_c\\\\d');
  });

  it('compares numbers as double precision, guarded against non-numeric JSON', () => {
    const number = `(CASE WHEN jsonb_typeof((r."values" -> $2::text)) = 'number' THEN ((r."values" -> $2::text))::double precision END)`;
    expect(where({ field: 'price', op: 'gte', value: 10 })).toEqual({
      sql: `(${number} >= $3::double precision)`,
      params: ['price', 10],
    });
    expect(where({ field: 'price', op: 'in', value: [1, 2] })).toEqual({
      sql: `COALESCE(${number} = ANY($3::double precision[]), FALSE)`,
      params: ['price', [1, 2]],
    });
    expect(where({ field: 'price', op: 'notIn', value: [1] }).sql).toBe(
      `(NOT COALESCE(${number} = ANY($3::double precision[]), FALSE))`,
    );
    expect(where({ field: 'price', op: 'ne', value: 1 }).sql).toBe(
      `(${number} IS DISTINCT FROM $3::double precision)`,
    );
  });

  it('compiles empty lists to constants that still use the bound field id', () => {
    const number = `(CASE WHEN jsonb_typeof((r."values" -> $2::text)) = 'number' THEN ((r."values" -> $2::text))::double precision END)`;
    expect(where({ field: 'price', op: 'in', value: [] })).toEqual({
      sql: `(${number} IS NULL AND FALSE)`,
      params: ['price'],
    });
    expect(where({ field: 'price', op: 'notIn', value: [] }).sql).toBe(`(${number} IS NULL OR TRUE)`);
    const tags = `(r."values" -> $2::text)`;
    expect(where({ field: 'tags', op: 'contains', value: [] })).toEqual({
      sql: `(${tags} IS NULL OR TRUE)`,
      params: ['tags'],
    });
    expect(where({ field: 'tags', op: 'in', value: [] }).sql).toBe(`(${tags} IS NULL AND FALSE)`);
    expect(where({ field: 'calc', op: 'notIn', value: [] }).sql).toBe(`(${tags} IS NULL OR TRUE)`);
    expect(where({ field: 'version', op: 'in', value: [] })).toEqual({
      sql: '(r.version IS NULL AND FALSE)',
      params: [],
    });
  });

  it('compiles range from rangeStart/rangeEnd or a two-element value', () => {
    const structured = compileQuery(
      {
        filters: {
          logic: 'and',
          conditions: [
            { field: 'due', operator: 'range', rangeStart: '2024-01-01', rangeEnd: '2024-01-31T10:00:00Z' },
          ],
        },
      },
      fields,
    );
    expect(structured.where).toBe(
      `((r."values" ->> $1::text) >= $2::text AND (r."values" ->> $1::text) <= $3::text)`,
    );
    expect(structured.countParams).toEqual(['due', '2024-01-01', '2024-01-31']);
    expect(where({ field: 'price', op: 'range', value: [null, 5] }).params).toEqual(['price', 5]);
  });

  it('normalizes datetime operands to ISO UTC and compares system times as timestamptz', () => {
    expect(where({ field: 'at', op: 'lt', value: '2024-01-02T10:00:00+02:00' }).params).toEqual([
      'at',
      '2024-01-02T08:00:00.000Z',
    ]);
    expect(where({ field: 'createdAt', op: 'gt', value: '2024-01-02' })).toEqual({
      // The operand names its whole millisecond (rows show times to the millisecond, the column has microseconds).
      sql: "(r.created_at >= ($2::timestamptz + interval '1 millisecond'))",
      params: ['2024-01-02T00:00:00.000Z'],
    });
    expect(where({ field: 'version', op: 'eq', value: 3 }).sql).toBe('(r.version = $2::double precision)');
    expect(where({ field: 'createdBy', op: 'in', value: ['u1'] }).sql).toBe(
      'COALESCE((r.created_by)::text = ANY($2::text[]), FALSE)',
    );
    expect(where({ field: 'id', op: 'eq', value: 'r1' }).sql).toBe('((r.id)::text = $2::text)');
  });

  it('treats a missing boolean as false', () => {
    expect(where({ field: 'done', op: 'eq', value: false }).sql).toBe(
      `(COALESCE((CASE WHEN jsonb_typeof((r."values" -> $2::text)) = 'boolean' THEN ((r."values" -> $2::text))::boolean END), FALSE) = $3::boolean)`,
    );
  });

  it('compiles select and multi_select on option ids', () => {
    expect(where({ field: 'status', op: 'in', value: ['todo', { id: 'done' }] }).params).toEqual([
      'status',
      ['todo', 'done'],
    ]);
    const tags = `(r."values" -> $2::text)`;
    expect(where({ field: 'tags', op: 'contains', value: 'a' })).toEqual({
      sql: `COALESCE(${tags} @> $3::jsonb, FALSE)`,
      params: ['tags', '["a"]'],
    });
    expect(where({ field: 'tags', op: 'in', value: ['a', 'b'] })).toEqual({
      sql: `EXISTS (SELECT 1 FROM unnest($3::text[]) AS q(v) WHERE ${tags} @> jsonb_build_array(q.v))`,
      params: ['tags', ['a', 'b']],
    });
    expect(where({ field: 'tags', op: 'eq', value: ['b', 'a'] }).sql).toBe(
      `COALESCE(jsonb_typeof(${tags}) = 'array' AND ${tags} @> $3::jsonb AND $3::jsonb @> ${tags}, FALSE)`,
    );
    expect(where({ field: 'rel', op: 'contains', value: 'r1' }).params).toEqual(['rel', '[{"rowId":"r1"}]']);
  });

  it('reads operands in the Value form of their field too', () => {
    expect(where({ field: 'status', op: 'eq', value: { selectOption: { id: 'todo' } } }).params).toEqual([
      'status',
      'todo',
    ]);
    expect(
      where({ field: 'status', op: 'in', value: [{ selectOption: 'done' }, { select: 'todo' }] }).params,
    ).toEqual(['status', ['done', 'todo']]);
    expect(where({ field: 'tags', op: 'contains', value: { multiSelect: { id: 'a' } } }).params).toEqual([
      'tags',
      '["a"]',
    ]);
    expect(where({ field: 'owner', op: 'eq', value: { user: { id: 'u1' } } }).params).toEqual([
      'owner',
      'u1',
    ]);
    expect(where({ field: 'createdBy', op: 'eq', value: { user: 'u2' } }).params).toEqual(['u2']);
    expect(where({ field: 'rel', op: 'contains', value: { relation: { rowId: 'r1' } } }).params).toEqual([
      'rel',
      '[{"rowId":"r1"}]',
    ]);
    expect(where({ field: 'stars', op: 'gte', value: { rating: 4 } }).params).toEqual(['stars', 4]);
    expect(where({ field: 'calc', op: 'eq', value: { number: 5 } }).params).toEqual(['calc', '5']);
  });

  it('compiles eq / ne on relations as the same set of row ids, and in / notIn on booleans', () => {
    const rel = `(r."values" -> $2::text)`;
    expect(where({ field: 'rel', op: 'eq', value: ['r1', 'r2'] })).toEqual({
      sql: `COALESCE(CASE WHEN jsonb_typeof(${rel}) = 'array' THEN ${rel} @> $3::jsonb AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${rel}) AS e(v) WHERE NOT $3::jsonb @> jsonb_build_array(jsonb_build_object('rowId', e.v -> 'rowId'))) END, FALSE)`,
      params: ['rel', '[{"rowId":"r1"},{"rowId":"r2"}]'],
    });
    expect(where({ field: 'rel', op: 'ne', value: 'r1' }).sql).toMatch(/^\(NOT COALESCE\(CASE WHEN/);
    expect(where({ field: 'done', op: 'in', value: [true, 'false'] })).toEqual({
      sql: `COALESCE(COALESCE((CASE WHEN jsonb_typeof(${rel}) = 'boolean' THEN (${rel})::boolean END), FALSE) = ANY($3::boolean[]), FALSE)`,
      params: ['done', [true, false]],
    });
  });

  it('compiles is_empty for every type, and eq null as is_empty', () => {
    const empty = `COALESCE((r."values" -> $2::text) IN ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb), TRUE)`;
    for (const field of ['name', 'price', 'files', 'tags', 'calc', 'done']) {
      expect(where({ field, op: 'is_empty' })).toEqual({ sql: empty, params: [field] });
      expect(where({ field, op: 'is_not_empty' }).sql).toBe(`(NOT ${empty})`);
    }
    expect(where({ field: 'name', op: 'eq', value: null }).sql).toBe(empty);
    expect(where({ field: 'updatedBy', op: 'is_empty' }).sql).toBe('(r.updated_by IS NULL)');
  });

  it('compiles formula values by operand type', () => {
    expect(where({ field: 'calc', op: 'gt', value: 1 }).sql).toContain(`= 'number' THEN`);
    expect(where({ field: 'calc', op: 'gt', value: 'm' }).sql).toContain(`= 'string' THEN`);
    expect(where({ field: 'calc', op: 'eq', value: 5 }).params).toEqual(['calc', '5']);
    expect(where({ field: 'calc', op: 'in', value: ['a', 1] }).params).toEqual(['calc', ['"a"', '1']]);
  });

  it('compares a list (a lookup) element by element in range operators, a range on one element', () => {
    const element = `EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof((r."values" -> $2::text)) = 'array' THEN (r."values" -> $2::text) ELSE jsonb_build_array((r."values" -> $2::text)) END) AS e(v) WHERE`;
    expect(where({ field: 'calc', op: 'gt', value: 1 })).toEqual({
      sql: `${element} ((CASE WHEN jsonb_typeof(e.v) = 'number' THEN (e.v)::double precision END) > $3::double precision))`,
      params: ['calc', 1],
    });
    expect(where({ field: 'calc', op: 'range', value: [1, 5] }).sql).toBe(
      `${element} ((CASE WHEN jsonb_typeof(e.v) = 'number' THEN (e.v)::double precision END) >= $3::double precision AND (CASE WHEN jsonb_typeof(e.v) = 'number' THEN (e.v)::double precision END) <= $4::double precision))`,
    );
    expect(where({ field: 'calc', op: 'lte', value: 'm' }).sql).toBe(
      `${element} ((CASE WHEN jsonb_typeof(e.v) = 'string' THEN e.v #>> '{}' END) <= $3::text))`,
    );
  });

  it('tests emptiness of a volatile formula on its computed value', () => {
    const volatileFields: FieldDefinition[] = [
      ...fields,
      { id: 'age', name: 'Age', type: 'formula', formula: 'DATEDIFF({due}, TODAY())', resultType: 'number' },
    ];
    const empty = compileQuery({ filter: { field: 'age', op: 'is_empty' } }, volatileFields).where;
    expect(empty).toMatch(
      /^COALESCE\(to_jsonb\(\(CASE WHEN \$1::text IS NULL THEN NULL ELSE .*statement_timestamp\(\)/,
    );
    expect(empty).toMatch(/ IN \('null'::jsonb, '""'::jsonb, '\[\]'::jsonb, '\{\}'::jsonb\), TRUE\)$/);
    expect(compileQuery({ filter: { field: 'age', op: 'eq', value: null } }, volatileFields).where).toBe(
      empty,
    );
  });

  it('joins groups with AND / OR and reuses one parameter per field id', () => {
    const compiled = compileQuery(
      {
        filter: {
          or: [
            { field: 'price', op: 'gt', value: 5 },
            {
              and: [
                { field: 'price', op: 'lt', value: 0 },
                { field: 'name', op: 'is_empty' },
              ],
            },
          ],
        },
      },
      fields,
    );
    expect(compiled.where).toMatch(
      /^\(\(.* > \$2::double precision\) OR \(\(.* < \$3::double precision\) AND COALESCE.*\$4::text.*\)\)$/,
    );
    expect(compiled.countParams).toEqual(['price', 5, 0, 'name']);
  });

  it('keeps malicious field ids and values in parameters only', () => {
    const compiled = compileQuery(
      {
        filter: { field: EVIL, op: 'contains', value: "'; delete from x; --" },
        sort: [{ field: EVIL, order: 'desc' }],
      },
      fields,
      { paramOffset: 1 },
    );
    for (const sql of [compiled.where, compiled.orderBy, compiled.cursorSelect]) {
      expect(sql).not.toContain('drop');
      expect(sql).not.toContain('delete');
    }
    expect(compiled.params).toEqual([EVIL, "%'; delete from x; --%"]);
    const unknown = details(() =>
      compileQuery({ filter: { field: "y'; drop table t; --", op: 'eq', value: 1 } }, fields),
    );
    expect(unknown).toEqual([{ field: 'filter.field', reason: 'unknown field "y\'; drop table t; --"' }]);
  });
});

describe('compileQuery: refusals', () => {
  it.each([
    [
      { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'contains', value: 'x' }] } },
      'filters.conditions[0].operator',
      'not supported for field type "currency"',
    ],
    [{ filter: { field: 'done', op: 'gt', value: true } }, 'filter.op', 'not supported'],
    [{ filter: { field: 'files', op: 'eq', value: 'a' } }, 'filter.op', 'not supported'],
    [{ filter: { field: 'tags', op: 'startsWith', value: 'a' } }, 'filter.op', 'not supported'],
    [{ filter: { field: 'price', op: 'eq', value: 'cheap' } }, 'filter.value', 'expected a finite number'],
    [{ filter: { field: 'price', op: 'in', value: 3 } }, 'filter.value', 'needs an array'],
    [
      { filter: { field: 'price', op: 'in', value: [1, 'x'] } },
      'filter.value[1]',
      'expected a finite number',
    ],
    [{ filter: { field: 'due', op: 'gt', value: 'soon' } }, 'filter.value', 'ISO 8601'],
    [{ filter: { field: 'status', op: 'eq', value: 'To do' } }, 'filter.value', 'unknown select option'],
    [{ filter: { field: 'tags', op: 'contains', value: 'zzz' } }, 'filter.value', 'unknown select option'],
    [{ filter: { field: 'name', op: 'eq', value: 5 } }, 'filter.value', 'expected text'],
    [{ filter: { field: 'name', op: 'eq' } }, 'filter.value', 'value is required'],
    [{ filter: { field: 'price', op: 'range' } }, 'filter.rangeStart', 'range needs'],
    [{ filter: { field: 'calc', op: 'gt', value: true } }, 'filter.value', 'number or string'],
    [{ filter: { field: 'name', op: 'eq', value: 'a\u0000b' } }, 'filter.value', 'NUL character'],
    [{ filter: { field: 'calc', op: 'in', value: ['ok', '\u0000'] } }, 'filter.value[1]', 'NUL character'],
    [
      { filter: { field: 'status', op: 'eq', value: { selectOption: 5 } } },
      'filter.value',
      'select option id',
    ],
    [{ filter: { field: 'nope', op: 'eq', value: 1 } }, 'filter.field', 'unknown field'],
    [{ sort: [{ field: 'nope' }] }, 'sort[0].field', 'unknown field'],
    [
      { filter: { field: 'price', op: 'in', value: Array.from({ length: 1001 }, () => 1) } },
      'filter.value',
      'at most 1000',
    ],
  ])('%j → %s', (query, field, reason) => {
    const found = details(() => compileQuery(query, fields));
    expect(found[0]?.field).toBe(field);
    expect(found[0]?.reason).toContain(reason);
  });
});

describe('compileQuery: sorting', () => {
  it('orders with nulls last ascending, first descending, and seq last', () => {
    const compiled = compileQuery(
      {
        sorts: [
          { field: 'name', direction: 'asc' },
          { field: 'createdAt', direction: 'desc' },
        ],
      },
      fields,
      { paramOffset: 1 },
    );
    expect(compiled.orderBy).toBe(
      `(r."values" ->> $2::text) ASC NULLS LAST, r.created_at DESC NULLS FIRST, r.seq ASC`,
    );
    expect(compiled.params).toEqual(['name']);
    expect(compiled.countParams).toEqual([]);
    expect(compiled.cursorSelect).toBe(
      `((r."values" ->> $2::text))::text AS "__sk0", (r.created_at)::text AS "__sk1", (r.seq)::text AS "__sk_seq"`,
    );
    expect(compiled.sortKeys.map((key) => [key.field, key.direction, key.cast])).toEqual([
      ['name', 'asc', 'text'],
      ['createdAt', 'desc', 'timestamptz'],
      ['seq', 'asc', 'bigint'],
    ]);
  });

  it('sorts single_select by option order', () => {
    const compiled = compileQuery({ sort: 'status:desc' }, fields);
    expect(compiled.orderBy).toBe(
      `array_position($2::text[], (r."values" ->> $1::text)) DESC NULLS FIRST, r.seq ASC`,
    );
    expect(compiled.params).toEqual(['status', ['todo', 'done']]);
  });

  it('shares field parameters between WHERE and ORDER BY but keeps count parameters to WHERE', () => {
    const compiled = compileQuery(
      {
        filter: { field: 'price', op: 'gt', value: 1 },
        sort: [
          { field: 'price', order: 'desc' },
          { field: 'name', order: 'asc' },
        ],
      },
      fields,
    );
    expect(compiled.countParams).toEqual(['price', 1]);
    expect(compiled.params).toEqual(['price', 1, 'name']);
    expect(compiled.orderBy).toContain('$1::text');
    expect(compiled.orderBy).toContain('$3::text');
  });

  it('gives a stable sort signature', () => {
    const a = compileQuery({ sort: 'price:asc' }, fields).sortSignature;
    expect(compileQuery({ sorts: [{ field: 'price', direction: 'asc' }] }, fields).sortSignature).toBe(a);
    expect(compileQuery({ sort: 'price:desc' }, fields).sortSignature).not.toBe(a);
  });
});
