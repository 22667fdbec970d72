import { AppException } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../fields/field.types.js';
import type { QueryAst } from '../query/query.types.js';
import { combineWithView, viewColumns, viewQueryAst } from './view-resolver.js';

const FIELDS: FieldDefinition[] = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'price', name: 'Price', type: 'number' },
];

describe('viewQueryAst', () => {
  it('reads filters in either shape and sorts with direction or order', () => {
    const short = viewQueryAst({ filters: { and: [{ field: 'price', op: 'gt', value: 1 }] }, sorts: [{ field: 'price', order: 'desc' }] });
    const structured = viewQueryAst({ filters: { logic: 'and', conditions: [{ field: 'price', operator: 'gt', value: 1 }] }, sorts: [{ field: 'price', direction: 'desc' }] });
    expect(short.sorts).toEqual([{ field: 'price', direction: 'desc', path: 'sorts[0]' }]);
    expect(structured.sorts.map((sort) => sort.direction)).toEqual(['desc']);
    expect(short.filter?.kind).toBe('group');
    expect(structured.filter?.kind).toBe('group');
  });

  it('labels errors as paths inside the config', () => {
    try {
      viewQueryAst({ filters: { and: [{ field: 'price', op: 'nope', value: 1 }] } });
      throw new Error('expected a validation error');
    } catch (error) {
      expect(error).toBeInstanceOf(AppException);
      expect((error as AppException).options.details?.[0]?.field).toBe('config.filters.and[0].op');
    }
  });
});

describe('combineWithView', () => {
  const view: QueryAst = viewQueryAst({ filters: [{ field: 'price', operator: 'gt', value: 1 }], sorts: [{ field: 'price', direction: 'desc' }, { field: 'name' }] });

  it('ANDs the explicit filter with the view filter and puts explicit sorts first without repeating a field', () => {
    const explicit: QueryAst = viewQueryAst({ filters: [{ field: 'name', operator: 'eq', value: 'a' }], sorts: [{ field: 'name', direction: 'desc' }] });
    const combined = combineWithView(explicit, view);
    expect(combined.filter).toMatchObject({ kind: 'group', logic: 'and', children: [view.filter, explicit.filter] });
    expect(combined.sorts.map((sort) => `${sort.field}:${sort.direction}`)).toEqual(['name:desc', 'price:desc']);
  });

  it('keeps the view alone when nothing is explicit', () => {
    expect(combineWithView({ filter: null, sorts: [], groupBy: null }, view)).toEqual({ filter: view.filter, sorts: view.sorts, groupBy: null });
  });
});

describe('viewColumns', () => {
  it('returns the named fields in the view order, or null for all fields', () => {
    expect(viewColumns({ columns: ['price', 'gone', 'name'] }, FIELDS)?.map((field) => field.id)).toEqual(['price', 'name']);
    expect(viewColumns({}, FIELDS)).toBeNull();
  });
});
