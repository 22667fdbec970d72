import { AppException } from '../../../common/errors/app.exception.js';
import { parseBulkRequest } from './bulk-request.js';

function detailsOf(body: unknown): unknown[] {
  try {
    parseBulkRequest(body);
  } catch (error) {
    if (error instanceof AppException) {
      return error.options.details ?? [];
    }
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('parseBulkRequest', () => {
  it('reads every target form, later items overriding earlier cells', () => {
    const parsed = parseBulkRequest([
      { target: { row: 'r1', field: 'a' }, value: 1 },
      { target: { row: 'r1' }, value: { b: 2 } },
      { target: { row: 'r2' }, value: [{ fieldId: 'a', value: 3 }] },
      { target: { rows: ['r1', 'r3'], field: 'a' }, value: 4 },
      { target: { property: 'p' }, value: 5 },
      { target: { properties: true }, value: { q: 6 } },
    ]);
    expect(parsed.rows.get('r1')?.values).toEqual({ a: 4, b: 2 });
    expect(parsed.rows.get('r2')?.values).toEqual({ a: 3 });
    expect(parsed.rows.get('r3')?.paths).toEqual({ a: '[3].value' });
    expect(parsed.properties?.values).toEqual({ p: 5, q: 6 });
  });

  it('accepts {updates: [...]} and the order-book form {rows: [{target, values}]}', () => {
    expect(parseBulkRequest({ updates: [{ target: { row: 'x', field: 'a' }, value: 1 }] }).rows.size).toBe(1);
    expect(parseBulkRequest({ rows: [{ target: { row: 'x' }, values: [{ fieldId: 'a', value: 1 }] }] }).rows.get('x')?.values).toEqual({ a: 1 });
  });

  it('refuses more than 1000 rows and malformed items, naming each', () => {
    expect(detailsOf([{ target: { rows: Array.from({ length: 1001 }, (_, i) => `r${i}`), field: 'a' }, value: 1 }])).toEqual([
      expect.objectContaining({ field: 'body', reason: expect.stringContaining('1000') }),
    ]);
    expect(detailsOf([{ target: {} }, { value: 1 }, { target: { row: 'r', field: 5 } }]).map((d) => (d as { field: string }).field)).toEqual([
      '[0].target',
      '[1].target',
      '[2].target.field',
    ]);
    expect(detailsOf([])).toHaveLength(1);
  });
});
