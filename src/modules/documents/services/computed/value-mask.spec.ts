import { ValueMask } from './value-mask.js';

describe('ValueMask', () => {
  const mask = new ValueMask(new Set(['sal', 'tot']));

  it('returns its input unchanged when nothing is hidden or nothing hidden is there', () => {
    const values = { who: 'x' };
    const event = { payload: { rowId: 'r', values: [{ fieldId: 'who', value: { text: 'x' } }] } };
    expect(ValueMask.NONE.values({ sal: [1] })).toEqual({ sal: [1] });
    expect(mask.values(values)).toBe(values);
    expect(mask.event(event)).toBe(event);
  });

  it('leaves hidden fields out of values, entries, fields and events', () => {
    expect(mask.values({ who: 'x', sal: [1], tot: 1 })).toEqual({ who: 'x' });
    expect(mask.entries([{ fieldId: 'who' }, { fieldId: 'tot' }])).toEqual([{ fieldId: 'who' }]);
    expect(mask.fields([{ id: 'who' }, { id: 'sal' }])).toEqual([{ id: 'who' }]);
    const event = {
      event: 'data_row_created',
      payload: {
        rowId: 'r',
        values: [
          { fieldId: 'who', value: 1 },
          { fieldId: 'sal', value: 2 },
        ],
      },
    };
    expect(mask.event(event)).toEqual({
      event: 'data_row_created',
      payload: { rowId: 'r', values: [{ fieldId: 'who', value: 1 }] },
    });
    expect(event.payload.values).toHaveLength(2);
  });

  it('leaves hidden fields out of every row of a bulk event, and returns an event with nothing hidden as it is', () => {
    const event = {
      event: 'data_bulk_operation',
      payload: {
        rowIds: ['a', 'b', 'c'],
        rows: [
          { rowId: 'a', version: 2, values: [{ fieldId: 'who', value: 1 }, { fieldId: 'tot', value: 9 }] },
          { rowId: 'b', version: 1, values: [{ fieldId: 'who', value: 2 }] },
          { rowId: 'c', version: 4, deleted: true },
        ],
      },
    };
    expect(mask.event(event).payload.rows).toEqual([
      { rowId: 'a', version: 2, values: [{ fieldId: 'who', value: 1 }] },
      { rowId: 'b', version: 1, values: [{ fieldId: 'who', value: 2 }] },
      { rowId: 'c', version: 4, deleted: true },
    ]);
    expect(event.payload.rows[0].values).toHaveLength(2);
    const clean = { payload: { rows: [event.payload.rows[1], event.payload.rows[2]] } };
    expect(mask.event(clean)).toBe(clean);
    const large = { payload: { rowIds: ['a'], rows: null } };
    expect(mask.event(large)).toBe(large);
  });

  it('masks row operations and the value snapshot of a hidden field', () => {
    const rowDelete = {
      target: { kind: 'row' as const, rowId: 'r' },
      oldValue: { values: { who: 'x', sal: [1] }, version: 2 },
      newValue: null,
    };
    expect(mask.operation(rowDelete)).toEqual({
      ...rowDelete,
      oldValue: { values: { who: 'x' }, version: 2 },
    });
    const fieldDelete = {
      target: { kind: 'field' as const, fieldId: 'tot' },
      oldValue: { field: { id: 'tot' }, values: { r: 1 } },
      newValue: null,
    };
    expect(mask.operation(fieldDelete)).toEqual({ ...fieldDelete, oldValue: { field: { id: 'tot' } } });
    const otherField = {
      target: { kind: 'field' as const, fieldId: 'who' },
      oldValue: { field: { id: 'who' }, values: { r: 'x' } },
      newValue: null,
    };
    expect(mask.operation(otherField)).toBe(otherField);
  });
});
