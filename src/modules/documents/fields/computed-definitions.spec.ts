import { validationDetailsOf } from './field-value.utils.js';
import { checkComputedDefinitions, checkDependents, volatileFormulaIds } from './computed-definitions.js';
import type { FieldDefinition, StoredRowValues } from './field.types.js';
import { computedPlan, computeRow, lookupValue, recomputeFormulas, rollupValue } from './computed-row.evaluator.js';

const FIELDS: FieldDefinition[] = [
  { id: 'qty', name: 'Qty', type: 'number' },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'rel', name: 'Rel', type: 'relation' },
  {
    id: 'sum',
    name: 'Sum',
    type: 'rollup',
    rollup: { relationFieldId: 'rel', targetFieldId: 'price', agg: 'sum' },
  },
  { id: 'total', name: 'Total', type: 'formula', formula: '{qty} * {sum}' },
  { id: 'label', name: 'Label', type: 'formula', formula: 'IF({total} > 10, "big", "small")' },
];

function details(run: () => unknown): Record<string, unknown>[] {
  try {
    run();
  } catch (error) {
    return (validationDetailsOf(error) ?? []) as Record<string, unknown>[];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('computed field definitions', () => {
  it('infers and stores result types', () => {
    const { fields } = checkComputedDefinitions(FIELDS, []);
    expect(fields.map((field) => field.resultType)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      'number',
      'text',
    ]);
  });

  it('names field, path and position of formula errors and cycles', () => {
    expect(
      details(() =>
        checkComputedDefinitions(
          [...FIELDS, { id: 'x', name: 'X', type: 'formula', formula: '{due} + 1' }],
          [],
        ),
      ),
    ).toEqual([expect.objectContaining({ field: 'fields[6].formula', fieldId: 'x', position: 0 })]);
    const cycle = details(() =>
      checkComputedDefinitions(
        [
          { id: 'a', name: 'A', type: 'formula', formula: '{c} + 1' },
          { id: 'b', name: 'B', type: 'formula', formula: '{a} + 1' },
          { id: 'c', name: 'C', type: 'formula', formula: '{b} + 1' },
        ],
        [],
      ),
    );
    expect(cycle[0].reason).toBe('circular reference: a → c → b → a');
    expect(
      details(() => checkComputedDefinitions([{ id: 'f', name: 'F', type: 'formula' }], []))[0].reason,
    ).toMatch(/empty formula/);
  });

  it('refuses lookups and rollups as properties, which have no relations to follow', () => {
    const refused = details(() =>
      checkComputedDefinitions(FIELDS, [
        { id: 'p', name: 'P', type: 'formula', formula: 'SUM({qty})' },
        { id: 'l', name: 'L', type: 'lookup', lookup: { relationFieldId: 'rel', targetFieldId: 'price' } },
        { id: 'r', name: 'R', type: 'rollup', rollup: { relationFieldId: 'rel', targetFieldId: 'price', agg: 'sum' } },
      ]),
    );
    expect(refused).toEqual([
      expect.objectContaining({ field: 'properties[1].type', fieldId: 'l', reason: expect.stringMatching(/cannot be a lookup/) }),
      expect.objectContaining({ field: 'properties[2].type', fieldId: 'r', reason: expect.stringMatching(/cannot be a rollup/) }),
    ]);
  });

  it('refuses deleting or retyping a field others depend on, naming them', () => {
    const without = FIELDS.filter((field) => field.id !== 'qty');
    expect(details(() => checkDependents(FIELDS, without))).toEqual([
      expect.objectContaining({ fieldId: 'qty', dependents: ['total'] }),
    ]);
    const retyped = FIELDS.map((field) => (field.id === 'qty' ? { ...field, type: 'text' as const } : field));
    expect(details(() => checkDependents(FIELDS, retyped))[0]).toMatchObject({
      fieldId: 'qty',
      dependents: ['total'],
    });
    const currency = FIELDS.map((field) =>
      field.id === 'qty' ? { ...field, type: 'currency' as const } : field,
    );
    expect(() => checkDependents(FIELDS, currency)).not.toThrow();
    expect(() =>
      checkDependents(
        FIELDS,
        without.filter((field) => field.id !== 'total' && field.id !== 'label'),
      ),
    ).not.toThrow();
  });

  it('computes a row in dependency order', () => {
    const { fields } = checkComputedDefinitions(FIELDS, []);
    const plan = computedPlan([...fields].reverse());
    const row = {
      id: 'r',
      seq: '1',
      version: 1,
      values: { qty: 3 },
      createdAt: new Date(),
      createdBy: null,
      updatedAt: new Date(),
      updatedBy: null,
    };
    const links = new Map<string, StoredRowValues[]>([['rel', [{ price: 2 }, { price: 5 }, {}]]]);
    expect(computeRow(plan, row, links, new Date())).toEqual({ sum: 7, total: 21, label: 'big' });
    expect(lookupValue([1, null, [2, 3], ''])).toEqual([1, 2, 3]);
    expect(lookupValue([null])).toBeNull();
    expect([
      rollupValue([], 'sum'),
      rollupValue([], 'count'),
      rollupValue([], 'avg'),
      rollupValue([1, 'x', 3], 'max'),
      rollupValue([1, 'x'], 'count'),
    ]).toEqual([0, 0, null, 3, 2]);
  });

  describe('volatile formulas (NOW()/TODAY() and formulas reading them)', () => {
    const VOLATILE: FieldDefinition[] = [
      { id: 'due', name: 'Due', type: 'date' },
      { id: 'qty', name: 'Qty', type: 'number' },
      { id: 'lbl', name: 'Lbl', type: 'formula', formula: 'IF({old}, "old", "new")' },
      { id: 'old', name: 'Old', type: 'formula', formula: '{age} > 365' },
      { id: 'age', name: 'Age', type: 'formula', formula: 'DATEDIFF({due}, TODAY())' },
      { id: 'double', name: 'Double', type: 'formula', formula: '{qty} * 2' },
      { id: 'lk', name: 'Lk', type: 'lookup', lookup: { relationFieldId: 'rel', targetFieldId: 'age' } },
      { id: 'rel', name: 'Rel', type: 'relation' },
      { id: 'viaLookup', name: 'Via', type: 'formula', formula: 'COUNTA({lk})' },
    ];

    it('are the formulas calling the clock and every formula reading one, through any number of formulas', () => {
      expect([...volatileFormulaIds(VOLATILE)].sort()).toEqual(['age', 'lbl', 'old']);
      // The row evaluator splits its plan by the same set.
      const plan = computedPlan(VOLATILE);
      expect(plan.volatile.map((field) => field.id)).toEqual(['age', 'old', 'lbl']);
      expect(plan.materialised.map((field) => field.id)).toEqual(['double', 'lk', 'viaLookup']);
    });

    it('are filled when formulas are worked out again (a point-in-time export), at the given instant', () => {
      const now = new Date('2021-01-02T12:00:00Z');
      expect(recomputeFormulas(computedPlan(VOLATILE), { due: '2020-01-01', qty: 2, double: 99 }, now)).toEqual({
        due: '2020-01-01',
        qty: 2,
        double: 4,
        age: 367,
        old: true,
        lbl: 'old',
      });
    });
  });
});
