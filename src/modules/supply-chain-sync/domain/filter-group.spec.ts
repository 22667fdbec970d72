import { evaluateFilterGroup, filterFieldRefs, hasConditions, type FilterGroup } from './filter-group.js';

const row: Record<string, unknown> = {
  price: 120,
  name: 'Steel bolt',
  category: ['cat1', 'Hardware'],
  tags: ['a', 'b'],
  date: '2026-05-01',
  empty: null,
};
const read = (id: string): unknown => row[id];

describe('evaluateFilterGroup', () => {
  it('evaluates every operator', () => {
    const check = (condition: object): boolean =>
      evaluateFilterGroup({ operator: 'AND', conditions: [condition as never] }, read);
    expect(check({ fieldId: 'price', operator: 'eq', value: 120 })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'eq', value: '120' })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'ne', value: 120 })).toBe(false);
    expect(check({ field: 'category', operator: 'eq', value: 'Hardware' })).toBe(true);
    expect(check({ field: 'category', operator: 'eq', value: 'cat1' })).toBe(true);
    expect(check({ fieldId: 'category', operator: 'in', values: ['Food', 'Hardware'] })).toBe(true);
    expect(check({ fieldId: 'category', operator: 'notIn', values: ['Food'] })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'gt', value: 100 })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'gte', value: 120 })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'lt', value: 120 })).toBe(false);
    expect(check({ fieldId: 'price', operator: 'lte', value: 120 })).toBe(true);
    expect(check({ fieldId: 'name', operator: 'contains', value: 'BOLT' })).toBe(true);
    expect(check({ fieldId: 'tags', operator: 'contains', value: ['a', 'b'] })).toBe(true);
    expect(check({ fieldId: 'tags', operator: 'contains', value: ['a', 'c'] })).toBe(false);
    expect(check({ fieldId: 'name', operator: 'exists' })).toBe(true);
    expect(check({ fieldId: 'empty', operator: 'exists' })).toBe(false);
    expect(check({ fieldId: 'empty', operator: 'exists', value: false })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'range', value: [100, 150] })).toBe(true);
    expect(check({ fieldId: 'price', operator: 'range', rangeStart: 121, rangeEnd: 150 })).toBe(false);
    expect(check({ fieldId: 'date', operator: 'range', values: ['2026-01-01', '2026-12-31'] })).toBe(true);
    expect(check({ fieldId: 'name', operator: 'startsWith', value: 'steel' })).toBe(true);
    expect(check({ fieldId: 'name', operator: 'endsWith', value: 'nut' })).toBe(false);
    expect(check({ fieldId: 'empty', operator: 'is_empty' })).toBe(true);
    expect(check({ fieldId: 'name', operator: 'is_not_empty' })).toBe(true);
    expect(check({ fieldId: 'missing', operator: 'gt', value: 1 })).toBe(false);
  });

  it('combines AND/OR groups and nested groups; an empty group matches', () => {
    const group: FilterGroup = {
      operator: 'OR',
      conditions: [{ fieldId: 'price', operator: 'gt', value: 500 }],
      groups: [
        {
          operator: 'AND',
          conditions: [
            { fieldId: 'price', operator: 'lt', value: 200 },
            { fieldId: 'name', operator: 'contains', value: 'bolt' },
          ],
        },
      ],
    };
    expect(evaluateFilterGroup(group, read)).toBe(true);
    expect(evaluateFilterGroup({ ...group, operator: 'AND' }, read)).toBe(false);
    expect(
      evaluateFilterGroup(
        {
          logic: 'or',
          conditions: [
            { fieldId: 'price', operator: 'eq', value: 1 },
            { fieldId: 'price', operator: 'eq', value: 120 },
          ],
        },
        read,
      ),
    ).toBe(true);
    expect(evaluateFilterGroup({}, read)).toBe(true);
    expect(evaluateFilterGroup(undefined, read)).toBe(true);
    expect(hasConditions({ groups: [{}] })).toBe(false);
    expect(hasConditions(group)).toBe(true);
    expect(filterFieldRefs(group)).toEqual(['price', 'price', 'name']);
  });
});
