import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { compileQuery } from './query.compiler.js';

const fields: FieldDefinition[] = [
  { id: 'status', name: 'Status', type: 'single_select', selectOptions: [{ id: 'a' }] },
  { id: 'price', name: 'Price', type: 'number' },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'tags', name: 'Tags', type: 'multi_select', selectOptions: [{ id: 'a' }] },
];

function details(fn: () => unknown): ErrorDetail[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    return (error as AppException).options.details ?? [];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('compileQuery: groupBy', () => {
  it('builds group keys, aggregates and parameters after WHERE', () => {
    const compiled = compileQuery(
      {
        filter: { field: 'price', op: 'gt', value: 0 },
        sort: 'name:asc',
        groupBy: {
          fields: ['status', 'createdBy'],
          aggregations: [
            { kind: 'count' },
            { kind: 'sum', field: 'price' },
            { kind: 'min', field: 'due' },
            { kind: 'count', field: 'name' },
          ],
        },
      },
      fields,
      { paramOffset: 1 },
    );
    const group = compiled.groupBy;
    expect(group).not.toBeNull();
    const status = `NULLIF((r."values" -> $4::text), 'null'::jsonb)`;
    const creator = `NULLIF(to_jsonb(r.created_by), 'null'::jsonb)`;
    // In numeric: a double sum overflowed past 1.8e308; beyond the double range the answer is null.
    const priceSum = `sum(((CASE WHEN jsonb_typeof((r."values" -> $2::text)) = 'number' THEN ((r."values" -> $2::text))::double precision END))::numeric)`;
    expect(group?.groupBy).toBe(`${status}, ${creator}`);
    expect(group?.orderBy).toBe(`${status} ASC NULLS LAST, ${creator} ASC NULLS LAST`);
    expect(group?.select).toBe(
      [
        `${status} AS "__g0"`,
        `${creator} AS "__g1"`,
        'to_jsonb(count(*)) AS "__a0"',
        `(CASE WHEN abs(${priceSum}) <= 1.7976931348623157e308 THEN to_jsonb((${priceSum})::double precision) END) AS "__a1"`,
        `to_jsonb(min((r."values" ->> $5::text))) AS "__a2"`,
        `to_jsonb(count(*) FILTER (WHERE NOT COALESCE((r."values" -> $6::text) IN ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb), TRUE))) AS "__a3"`,
      ].join(', '),
    );
    // WHERE uses $2, $3; the sort's `name` ($4 in the list statement) is not part of the grouped statement.
    expect(group?.params).toEqual(['price', 0, 'status', 'due', 'name']);
    expect(compiled.params).toEqual(['price', 0, 'name']);
    expect(group?.keys).toEqual([
      { field: 'status', alias: '__g0' },
      { field: 'createdBy', alias: '__g1' },
    ]);
    expect(group?.aggregates.map((aggregate) => aggregate.alias)).toEqual(['__a0', '__a1', '__a2', '__a3']);
  });

  it('counts rows per group when no aggregation is asked for, and allows aggregations without keys', () => {
    const grouped = compileQuery({ groupBy: { fields: ['tags'] } }, fields).groupBy;
    expect(grouped?.aggregates).toEqual([{ kind: 'count', alias: '__a0' }]);
    const total = compileQuery(
      { groupBy: { aggregations: [{ kind: 'avg', field: 'price' }] } },
      fields,
    ).groupBy;
    expect(total?.groupBy).toBe('');
    expect(total?.orderBy).toBe('');
    expect(total?.params).toEqual(['price']);
  });

  it('groups and counts a volatile formula (and one reading it) by its computed value, not the absent stored JSON', () => {
    const volatileFields: FieldDefinition[] = [
      ...fields,
      { id: 'age', name: 'Age', type: 'formula', formula: 'DATEDIFF({due}, TODAY())', resultType: 'number' },
      {
        id: 'old',
        name: 'Old',
        type: 'formula',
        formula: 'IF({age} > 365, "old", "new")',
        resultType: 'text',
      },
    ];
    const group = compileQuery(
      { groupBy: { fields: ['old'], aggregations: [{ kind: 'count', field: 'age' }] } },
      volatileFields,
    ).groupBy;
    expect(group?.groupBy).toMatch(
      /^NULLIF\(to_jsonb\(\(CASE WHEN \$1::text IS NULL THEN NULL ELSE .*statement_timestamp\(\)/,
    );
    expect(group?.select).toMatch(
      /count\(\*\) FILTER \(WHERE NOT COALESCE\(to_jsonb\(\(CASE WHEN \$2::text IS NULL/,
    );
    expect(group?.select).not.toContain(`r."values" -> $1::text`);
    expect(group?.params).toEqual(['old', 'age']);
  });

  it('refuses sum/avg on non-numeric fields and min/max on lists', () => {
    expect(
      details(() =>
        compileQuery(
          { groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'name' }] } },
          fields,
        ),
      ),
    ).toEqual([
      { field: 'groupBy.aggregations[0].field', reason: 'sum needs a numeric field, "name" is text' },
    ]);
    expect(
      details(() => compileQuery({ groupBy: { aggregations: [{ kind: 'avg', field: 'due' }] } }, fields))[0]
        ?.field,
    ).toBe('groupBy.aggregations[0].field');
    expect(
      details(() => compileQuery({ groupBy: { aggregations: [{ kind: 'max', field: 'tags' }] } }, fields))[0]
        ?.reason,
    ).toContain('max');
    expect(details(() => compileQuery({ groupBy: { fields: ['ghost'] } }, fields))[0]?.field).toBe(
      'groupBy.fields[0]',
    );
  });
});
