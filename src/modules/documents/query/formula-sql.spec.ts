import { validationDetailsOf } from '../fields/field-value.utils.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { compileVolatileFormula, MAX_FORMULA_SQL_LENGTH } from './formula-sql.js';
import { checkVolatileFormulas, queryHandlerFor, valueJsonSql } from './volatile-formula-fields.js';

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
    // ISO text (year 0000 for PostgreSQL's 1 BC), as a stored date formula holds it.
    expect(compileVolatileFormula(FIELDS[4], FIELDS).sql).toContain(`to_char(`);
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

  it('treats a formula reading a volatile one (through any number of formulas) as volatile too', () => {
    const fields: FieldDefinition[] = [
      ...FIELDS,
      { id: 'loud', name: 'Loud', type: 'formula', formula: 'CONCAT({flag}, "!")', resultType: 'text' },
    ];
    const key = { kind: 'json' as const, key: '$2' };
    for (const id of ['flag', 'loud']) {
      const handler = queryHandlerFor(fields.find((field) => field.id === id) as FieldDefinition, fields);
      expect(handler.family).toBe('text');
      expect(handler.sqlExpr(key).sql).toContain('statement_timestamp()');
      // Group keys and emptiness read the computed value, never the (absent) stored JSON.
      expect(valueJsonSql({ handler, ref: key })).toMatch(/^to_jsonb\(\(CASE WHEN \$2::text IS NULL/);
    }
    const stored = queryHandlerFor(FIELDS[1], FIELDS);
    expect(valueJsonSql({ handler: stored, ref: key })).toBe(`(r."values" -> $2::text)`);
  });

  it('refuses a formula reading a volatile one with what SQL cannot evaluate, at the reference', () => {
    const fields: FieldDefinition[] = [
      ...FIELDS,
      { id: 'bad', name: 'Bad', type: 'formula', formula: 'LEN({flag}) + 1' },
      { id: 'reader', name: 'Reader', type: 'formula', formula: '1 + {bad}' },
    ];
    let details: Record<string, unknown>[] = [];
    try {
      checkVolatileFormulas(fields);
    } catch (error) {
      details = (validationDetailsOf(error) ?? []) as Record<string, unknown>[];
    }
    expect(details).toEqual([
      expect.objectContaining({ field: 'fields[6].formula', fieldId: 'bad', position: 0 }),
      expect.objectContaining({
        field: 'fields[7].formula',
        fieldId: 'reader',
        position: 4,
        reason: expect.stringContaining('{bad}: LEN is not supported'),
      }),
    ]);
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

  it('binds repeated operands once, so nested operators grow the SQL linearly', () => {
    const sqlOf = (formula: string): string =>
      compileVolatileFormula({ id: 'f', name: 'F', type: 'formula', formula }, FIELDS).sql;
    const lengths = [4, 8, 16].map((n) => sqlOf('YEAR(NOW())' + ' % 7'.repeat(n)).length);
    expect(lengths[2] - lengths[1]).toBeLessThan(2 * (lengths[1] - lengths[0]) + 100);
    expect(sqlOf('qty+'.repeat(199) + 'YEAR(NOW())').length).toBeLessThan(MAX_FORMULA_SQL_LENGTH);
  });

  it('reads text operands of date functions through a safe parse, never a bare cast', () => {
    const sql = compileVolatileFormula(
      { id: 'f', name: 'F', type: 'formula', formula: 'DATEDIFF("2020-01-01", NOW()) + YEAR("x")' },
      FIELDS,
    ).sql;
    expect(sql).toContain('regexp_match(');
    expect(sql).not.toMatch(/::text\)?::timestamptz/);
  });

  it('refuses volatile formulas nested too deeply through other volatile formulas', () => {
    const chain: FieldDefinition[] = Array.from({ length: 3 }, (_, index) => ({
      id: `v${index}`,
      name: `V${index}`,
      type: 'formula',
      formula: (index === 0 ? 'YEAR(NOW())' : `v${index - 1} + YEAR(NOW())`) + ' + 1'.repeat(100),
    }));
    expect(() => checkVolatileFormulas(chain)).toThrow();
    expect(() => checkVolatileFormulas(chain.slice(0, 2))).not.toThrow();
  });
});
