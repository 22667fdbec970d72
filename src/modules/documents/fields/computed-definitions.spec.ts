import { validationDetailsOf } from './field-value.utils.js';
import { checkComputedDefinitions, checkDependents } from './computed-definitions.js';
import type { FieldDefinition, StoredRowValues } from './field.types.js';
import { computedPlan, computeRow, lookupValue, rollupValue } from './computed-row.evaluator.js';

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
});
