import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { isRowShape, parseRowChangeInput } from './row-change-input.js';

const FIELDS = new Set(['name', 'qty']);

function refusal(run: () => unknown): ErrorDetail[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    return (error as AppException).options.details ?? [];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('row change input', () => {
  it('tells a Row from an object of field id to Value', () => {
    expect(isRowShape({ id: 'r1', values: [] }, FIELDS)).toBe(true);
    expect(isRowShape({ values: {} }, FIELDS)).toBe(true);
    expect(isRowShape({ id: 'r1' }, FIELDS)).toBe(true);
    expect(isRowShape({ name: 'x' }, FIELDS)).toBe(false);
    expect(isRowShape([{ fieldId: 'name', value: 'x' }], FIELDS)).toBe(false);
    // Every key a field: the object form, as before the Row form existed.
    expect(isRowShape({ values: 'x', id: 'y' }, new Set(['values', 'id']))).toBe(false);
    expect(isRowShape({ values: [], id: 'y' }, new Set(['values']))).toBe(true);
  });

  it('takes the row id from target.rowId or the Row, and refuses two different ones', () => {
    const row = { values: [{ fieldId: 'name', value: { text: 'x' } }] };
    expect(parseRowChangeInput('row-create', { rowId: 'a' }, { ...row, id: 'a' }, FIELDS)).toMatchObject({
      rowId: 'a',
      values: row.values,
    });
    expect(parseRowChangeInput('row-create', {}, { ...row, id: 'b' }, FIELDS)).toMatchObject({
      rowId: 'b',
      rowIdPath: 'newValue.id',
    });
    expect(parseRowChangeInput('row-create', { rowId: 'c' }, row, FIELDS)).toMatchObject({
      rowId: 'c',
      rowIdPath: 'target.rowId',
    });
    expect(parseRowChangeInput('row-create', {}, { id: 'd' }, FIELDS)).toMatchObject({
      rowId: 'd',
      values: [],
    });
    expect(
      refusal(() => parseRowChangeInput('row-create', { rowId: 'a' }, { ...row, id: 'b' }, FIELDS)),
    ).toEqual([{ field: 'newValue.id', reason: 'id "b" differs from target.rowId "a"' }]);
  });

  it('reads the version and ignores the audit keys', () => {
    const input = parseRowChangeInput(
      'row-update',
      { rowId: 'a' },
      {
        id: 'a',
        values: { qty: 1 },
        version: 3,
        createdAt: 'x',
        createdBy: 'y',
        updatedAt: 'z',
        updatedBy: 'w',
      },
      FIELDS,
    );
    expect(input).toMatchObject({ rowId: 'a', values: { qty: 1 }, version: 3 });
  });

  it('collects every structural problem of a Row', () => {
    expect(
      refusal(() =>
        parseRowChangeInput('row-update', {}, { id: 5, values: 'x', version: 1.5, extra: true }, FIELDS),
      ),
    ).toEqual([
      { field: 'newValue.extra', reason: expect.stringContaining('unknown Row key') },
      { field: 'newValue.id', reason: 'id must be a string' },
      { field: 'newValue.values', reason: expect.stringContaining('values must be an array') },
      { field: 'newValue.version', reason: 'version must be a non-negative integer' },
    ]);
    expect(refusal(() => parseRowChangeInput('row-update', { rowId: 'a' }, { id: 'a' }, FIELDS))).toEqual([
      { field: 'newValue.values', reason: 'values is required' },
    ]);
    for (const missing of [undefined, null]) {
      expect(refusal(() => parseRowChangeInput('row-update', { rowId: 'a' }, missing, FIELDS))).toEqual([
        { field: 'newValue', reason: 'newValue is required: the values to change' },
      ]);
    }
    expect(parseRowChangeInput('row-create', { rowId: 'a' }, undefined, FIELDS).values).toEqual([]);
  });

  it('maps the value parser’s details to paths inside newValue', () => {
    const row = parseRowChangeInput(
      'row-create',
      {},
      { id: 'r', values: [{ fieldId: 'name' }, { fieldId: 'qty' }] },
      FIELDS,
    );
    expect(row.pathOf({ field: 'values[0].fieldId', reason: 'r' })).toEqual({
      field: 'newValue.values[0].fieldId',
      reason: 'r',
    });
    expect(row.pathOf({ fieldId: 'qty', reason: 'r' })).toEqual({
      fieldId: 'qty',
      field: 'newValue.values[1].value',
      reason: 'r',
    });
    expect(row.pathOf({ field: 'id', reason: 'r' })).toEqual({ field: 'newValue.id', reason: 'r' });
    const object = parseRowChangeInput('row-create', { rowId: 'r' }, { qty: 'x' }, FIELDS);
    expect(object.pathOf({ fieldId: 'qty', reason: 'r' })).toEqual({
      fieldId: 'qty',
      field: 'newValue.qty',
      reason: 'r',
    });
    expect(object.pathOf({ field: 'id', reason: 'r' })).toEqual({ field: 'target.rowId', reason: 'r' });
    const single = parseRowChangeInput('row-update', { rowId: 'r', fieldId: 'qty' }, { number: 'x' }, FIELDS);
    expect(single.values).toEqual({ qty: { number: 'x' } });
    expect(single.pathOf({ fieldId: 'qty', reason: 'r' })).toEqual({
      fieldId: 'qty',
      field: 'newValue',
      reason: 'r',
    });
  });
});
