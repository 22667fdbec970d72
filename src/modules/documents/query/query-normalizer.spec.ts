import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { normalizeQuery, parseSortParam } from './query-normalizer.js';

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

function nest(depth: number): unknown {
  let group: unknown = { logic: 'and', conditions: [{ field: 'a', operator: 'eq', value: 1 }] };
  for (let i = 1; i < depth; i += 1) {
    group = { logic: 'or', groups: [group] };
  }
  return group;
}

describe('normalizeQuery', () => {
  it('normalizes the structured form', () => {
    const ast = normalizeQuery({
      filters: {
        logic: 'or',
        conditions: [{ field: 'a', operator: 'range', rangeStart: 1, rangeEnd: 2 }],
        groups: [{ logic: 'and', conditions: [{ field: 'b', operator: 'is_empty' }] }],
      },
      sorts: [{ field: 'a', direction: 'desc' }],
      groupBy: { fields: ['b'], aggregations: [{ kind: 'sum', field: 'a' }] },
      page: 2,
    });
    expect(ast.filter).toEqual({
      kind: 'group',
      logic: 'or',
      path: 'filters',
      children: [
        {
          kind: 'condition',
          field: 'a',
          operator: 'range',
          rangeStart: 1,
          rangeEnd: 2,
          path: 'filters.conditions[0]',
          operatorKey: 'operator',
        },
        {
          kind: 'group',
          logic: 'and',
          path: 'filters.groups[0]',
          children: [
            {
              kind: 'condition',
              field: 'b',
              operator: 'is_empty',
              path: 'filters.groups[0].conditions[0]',
              operatorKey: 'operator',
            },
          ],
        },
      ],
    });
    expect(ast.sorts).toEqual([{ field: 'a', direction: 'desc', path: 'sorts[0]' }]);
    expect(ast.groupBy).toEqual({
      fields: [{ field: 'b', path: 'groupBy.fields[0]' }],
      aggregations: [{ kind: 'sum', field: 'a', path: 'groupBy.aggregations[0]' }],
    });
  });

  it('normalizes the short form into the same tree', () => {
    const ast = normalizeQuery({
      filter: {
        and: [
          { field: 'a', op: 'gt', value: 1 },
          {
            or: [
              { field: 'b', op: 'eq', value: 'x' },
              { field: 'c', op: 'lte', value: 3 },
            ],
          },
        ],
      },
      sort: [{ field: 'a', order: 'desc' }, { field: 'b' }],
    });
    expect(ast.filter).toMatchObject({
      kind: 'group',
      logic: 'and',
      children: [
        { kind: 'condition', field: 'a', operator: 'gt', value: 1, path: 'filter.and[0]', operatorKey: 'op' },
        {
          kind: 'group',
          logic: 'or',
          children: [{ operator: 'eq' }, { operator: 'lte', path: 'filter.and[1].or[1]' }],
        },
      ],
    });
    expect(ast.sorts.map((sort) => [sort.field, sort.direction])).toEqual([
      ['a', 'desc'],
      ['b', 'asc'],
    ]);
  });

  it('accepts a single short-form condition and operator aliases', () => {
    expect(normalizeQuery({ filter: { field: 'a', op: 'neq', value: 1 } }).filter).toMatchObject({
      kind: 'condition',
      operator: 'ne',
    });
    expect(normalizeQuery({ filter: { field: 'a', op: 'not_in', value: [] } }).filter).toMatchObject({
      operator: 'notIn',
    });
    expect(normalizeQuery(undefined)).toEqual({ filter: null, sorts: [], groupBy: null });
  });

  it('ANDs both forms when both are given', () => {
    const ast = normalizeQuery({
      filters: { logic: 'and', conditions: [{ field: 'a', operator: 'eq', value: 1 }] },
      filter: { field: 'b', op: 'eq', value: 2 },
    });
    expect(ast.filter).toMatchObject({
      kind: 'group',
      logic: 'and',
      children: [{ kind: 'group' }, { kind: 'condition', field: 'b' }],
    });
  });

  it('refuses malformed queries with a field path', () => {
    expect(details(() => normalizeQuery({ filters: { logic: 'xor' } }))[0]?.field).toBe('filters.logic');
    expect(
      details(() => normalizeQuery({ filters: { conditions: [{ field: 'a', operator: 'like' }] } }))[0]
        ?.field,
    ).toBe('filters.conditions[0].operator');
    expect(details(() => normalizeQuery({ filter: { and: [{ field: 'a', op: 'sounds' }] } }))[0]?.field).toBe(
      'filter.and[0].op',
    );
    expect(details(() => normalizeQuery({ filters: { conditions: [{ operator: 'eq' }] } }))[0]?.field).toBe(
      'filters.conditions[0].field',
    );
    expect(details(() => normalizeQuery({ sorts: [{ field: 'a', direction: 'up' }] }))[0]?.field).toBe(
      'sorts[0].direction',
    );
    expect(details(() => normalizeQuery({ groupBy: { aggregations: [{ kind: 'median' }] } }))[0]?.field).toBe(
      'groupBy.aggregations[0].kind',
    );
    expect(
      details(() => normalizeQuery({ groupBy: { fields: ['a'], aggregations: [{ kind: 'sum' }] } }))[0]
        ?.field,
    ).toBe('groupBy.aggregations[0].field');
    expect(details(() => normalizeQuery('x'))[0]?.field).toBe('query');
  });

  it('enforces the limits', () => {
    expect(normalizeQuery({ filters: nest(20) }).filter).not.toBeNull();
    expect(details(() => normalizeQuery({ filters: nest(21) }))[0]?.reason).toContain('20 levels');
    const conditions = Array.from({ length: 201 }, () => ({ field: 'a', operator: 'eq', value: 1 }));
    expect(
      normalizeQuery({ filters: { logic: 'and', conditions: conditions.slice(0, 200) } }).filter,
    ).not.toBeNull();
    expect(details(() => normalizeQuery({ filters: { logic: 'and', conditions } }))[0]?.reason).toContain(
      '200 conditions',
    );
    const sorts = Array.from({ length: 11 }, () => ({ field: 'a', direction: 'asc' }));
    expect(details(() => normalizeQuery({ sorts }))[0]?.field).toBe('sorts');
    expect(
      details(() => normalizeQuery({ groupBy: { fields: ['a', 'b', 'c', 'd', 'e', 'f'] } }))[0]?.field,
    ).toBe('groupBy.fields');
  });
});

describe('parseSortParam', () => {
  it('parses field:direction lists', () => {
    expect(parseSortParam('price:desc')).toEqual([{ field: 'price', direction: 'desc', path: 'sort[0]' }]);
    expect(parseSortParam('a:ASC, b').map((sort) => [sort.field, sort.direction])).toEqual([
      ['a', 'asc'],
      ['b', 'asc'],
    ]);
    expect(parseSortParam(['a:desc', 'b:asc'])).toHaveLength(2);
    expect(parseSortParam(undefined)).toEqual([]);
    expect(parseSortParam('')).toEqual([]);
  });

  it('refuses malformed directions', () => {
    expect(details(() => parseSortParam('a:sideways'))).toEqual([
      { field: 'sort', reason: 'sort must look like field:asc or field:desc, got "a:sideways"' },
    ]);
    expect(details(() => parseSortParam(':asc'))[0]?.field).toBe('sort');
  });
});
