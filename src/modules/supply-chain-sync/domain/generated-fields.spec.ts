import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { planBinding } from './binding-plan.js';
import type { PlanInput } from './binding-plan.types.js';
import { convertForTarget } from './field-mapping.js';
import { alignGeneratedFields } from './generated-fields.js';

describe('generated fields in step with the catalog', () => {
  const order: FieldDefinition[] = [
    { id: 'sku', name: 'SKU', type: 'text' },
    {
      id: 'color',
      name: 'Colour',
      type: 'single_select',
      selectOptions: [
        { id: 'red', label: 'Red' },
        { id: 'mine', label: 'Purple' },
      ],
    },
    { id: 'weight', name: 'Weight', type: 'number' },
  ];
  const generated = [
    { id: 'color', sourceFieldId: 'color' },
    { id: 'weight', sourceFieldId: 'weight' },
  ];

  it('takes new options and renamed labels, keeps the rest of the order book', () => {
    const catalog: FieldDefinition[] = [
      {
        id: 'color',
        name: 'Color',
        type: 'single_select',
        selectOptions: [
          { id: 'red', label: 'Crimson' },
          { id: 'green', label: 'Green', color: '#0f0' },
          { id: 'violet', label: 'purple' },
        ],
      },
      { id: 'weight', name: 'Weight', type: 'text' },
    ];
    expect(alignGeneratedFields(order, catalog, generated)).toEqual([
      order[0],
      {
        ...order[1],
        selectOptions: [
          { id: 'red', label: 'Crimson' },
          { id: 'mine', label: 'Purple' },
          { id: 'green', label: 'Green', color: '#0f0' },
        ],
      },
      order[2],
    ]);
    expect(alignGeneratedFields(order, order, generated)).toBeNull();
  });
});

describe('values that do not fit their order-book field', () => {
  it('converts as a type change converts', () => {
    const team: FieldDefinition = { id: 'team', name: 'Team', type: 'collaborator' };
    const rel: FieldDefinition = { id: 'rel', name: 'Rel', type: 'relation' };
    expect(convertForTarget(['u1', 'u2'], 'text', { field: team, stored: ['u1', 'u2'] })).toEqual({
      value: 'u1, u2',
    });
    expect(convertForTarget(null, 'text', { field: rel, stored: [{ rowId: 'a' }, { rowId: 'b' }] })).toEqual({
      value: 'a, b',
    });
    expect(convertForTarget(' 7 ', 'number')).toEqual({ value: 7 });
    expect(convertForTarget('5 kg', 'number')).toBeNull();
    expect(convertForTarget(3, 'nonsense')).toBeNull();
  });

  it('leaves out only the field that fits in no form', () => {
    const fields: FieldDefinition[] = [
      { id: 'sku', name: 'SKU', type: 'text' },
      { id: 'note', name: 'Note', type: 'text' },
    ];
    const input: PlanInput = {
      changes: [{ rowId: 'a', kind: 'created', fieldIds: [] }],
      sourceRows: new Map([['a', { sku: 'A', note: 'lots' }]]),
      reader: (row) =>
        Object.assign((id: string) => row[id], {
          stored: (id: string) => row[id],
          field: (id: string) => fields.find((field) => field.id === id),
        }),
      sharedFieldIds: ['sku', 'note'],
      shareScope: { type: 'all' },
      eventTypes: [],
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'note', targetFieldId: 'qty' },
        ],
      },
      receiverFilter: { acceptMode: 'manual' },
      conflictResolution: null,
      links: new Map(),
      targetRows: new Map(),
      dedupIndex: new Map(),
      unmappedTarget: () => null,
      mapping: {
        targetType: (id) => (id === 'qty' ? 'number' : 'text'),
        rates: [],
        today: '2026-01-01',
        formula: () => null,
      },
      toStored: (values) => {
        if ('qty' in values && typeof values.qty !== 'number') {
          throw new Error(`qty: expected a finite number, got ${JSON.stringify(values.qty)}`);
        }
        return values;
      },
      localChangedAt: () => null,
      upstreamChangedAt: new Date(0),
      newRowId: () => 't1',
    };
    const plan = planBinding(input);
    expect(plan.changes).toEqual([
      expect.objectContaining({ kind: 'create', values: { sku: 'A' }, decision: 'pending' }),
    ]);
    expect(plan.logs[0]).toMatchObject({
      outcome: 'pending',
      reason: 'created in a pending request; left out: qty (expected a finite number, got "lots")',
    });
    // The pending create is marked: deleting the catalog row before the buyer decides proposes the deletion.
    const link = plan.links.get('a') as { targetRowId: string; lastValues: Record<string, unknown> };
    const deleted = planBinding({
      ...input,
      changes: [{ rowId: 'a', kind: 'deleted', fieldIds: [] }],
      sourceRows: new Map(),
      links: new Map([['a', { ...link, syncedAt: new Date(0) }]]),
    });
    expect(deleted.changes).toEqual([
      expect.objectContaining({ kind: 'delete', targetRowId: 't1', decision: 'pending' }),
    ]);
  });
});
