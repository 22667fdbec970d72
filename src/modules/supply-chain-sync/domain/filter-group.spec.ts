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

  it('names select options by id or by label when the reader knows the options', () => {
    const options = [
      { id: 'red', label: 'Crimson' },
      { id: 'r2', label: 'red' },
      { id: 'blue', label: 'Blue' },
    ];
    const stored: Record<string, unknown> = { color: 'red', tags: ['r2', 'blue'] };
    const labels = new Map(options.map((option) => [option.id, option.label]));
    const reader = Object.assign(
      (ref: string): unknown => {
        const value = stored[ref];
        return Array.isArray(value) ? value.map((id) => labels.get(id)) : labels.get(String(value));
      },
      { stored: (ref: string): unknown => stored[ref], options: () => options },
    );
    const check = (condition: object): boolean =>
      evaluateFilterGroup({ operator: 'AND', conditions: [condition as never] }, reader);
    expect(check({ fieldId: 'color', operator: 'eq', value: 'red' })).toBe(true); // the id first
    expect(check({ fieldId: 'color', operator: 'eq', value: 'crimson' })).toBe(true); // a label, any case
    expect(check({ fieldId: 'color', operator: 'ne', value: 'Crimson' })).toBe(false);
    expect(check({ fieldId: 'tags', operator: 'eq', value: 'red' })).toBe(false); // "red" is the option red, not r2
    expect(check({ fieldId: 'tags', operator: 'in', values: ['r2'] })).toBe(true);
    expect(check({ fieldId: 'tags', operator: 'contains', value: 'Blue' })).toBe(true);
    expect(check({ fieldId: 'tags', operator: 'notIn', values: ['blue'] })).toBe(false);
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
