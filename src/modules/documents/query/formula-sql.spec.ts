import { validationDetailsOf } from '../fields/field-value.utils.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { checkVolatileFormulas, compileVolatileFormula, queryHandlerFor } from './formula-sql.js';

const FIELDS: FieldDefinition[] = [
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'qty', name: 'Qty', type: 'number' },
  { id: 'tags', name: 'Tags', type: 'multi_select' },
  { id: 'late', name: 'Late', type: 'formula', formula: 'DATEDIFF({due}, TODAY())', resultType: 'number' },
  {
    id: 'next',
    name: 'Next',
    type: 'formula',
    formula: 'DATEADD(NOW(), {qty}, "hours")',
    resultType: 'date',
  },
  { id: 'flag', name: 'Flag', type: 'formula', formula: 'IF({late} > 3, "late", "ok")', resultType: 'text' },
];

describe('volatile formulas as SQL', () => {
  it('compiles NOW()/TODAY() formulas, inlining volatile formulas they read', () => {
    expect(compileVolatileFormula(FIELDS[3], FIELDS)).toMatchObject({ type: 'number' });
    expect(compileVolatileFormula(FIELDS[3], FIELDS).sql).toContain(`statement_timestamp()`);
    expect(compileVolatileFormula(FIELDS[4], FIELDS)).toMatchObject({ type: 'date' });
    expect(compileVolatileFormula(FIELDS[4], FIELDS).sql).toMatch(/^to_char\(/);
    expect(compileVolatileFormula(FIELDS[5], FIELDS).sql).toContain(`(r."values" ->> 'due')`);
  });

  it('queries them with the operators of their result type and the compiled SQL', () => {
    const handler = queryHandlerFor(FIELDS[3], FIELDS);
    expect(handler.family).toBe('number');
    expect(handler.operators).toContain('gt');
    expect(handler.sqlExpr({ kind: 'json', key: '$2' })).toMatchObject({
      cast: 'double precision',
      sql: expect.stringContaining('$2::text IS NULL'),
    });
    expect(queryHandlerFor(FIELDS[1], FIELDS).family).toBe('number');
  });

  it('refuses what SQL cannot evaluate, with the position', () => {
    const fields: FieldDefinition[] = [
      ...FIELDS,
      { id: 'bad', name: 'Bad', type: 'formula', formula: 'IF(TODAY() > {due}, LEN({tags}), 0)' },
    ];
    let details: Record<string, unknown>[] = [];
    try {
      checkVolatileFormulas(fields);
    } catch (error) {
      details = (validationDetailsOf(error) ?? []) as Record<string, unknown>[];
    }
    expect(details).toEqual([
      expect.objectContaining({ field: 'fields[6].formula', fieldId: 'bad', position: 20 }),
    ]);
    expect(() => checkVolatileFormulas(FIELDS)).not.toThrow();
  });
});
