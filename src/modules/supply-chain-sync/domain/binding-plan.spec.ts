import { planBinding } from './binding-plan.js';
import type { PlanInput } from './binding-plan.types.js';

function input(overrides: Partial<PlanInput>): PlanInput {
  let next = 0;
  return {
    changes: [],
    sourceRows: new Map(),
    reader: (row) => (id) => row[id],
    sharedFieldIds: ['sku', 'name', 'price'],
    shareScope: { type: 'all' },
    eventTypes: [],
    fieldMapping: {
      rules: [
        { sourceFieldId: 'sku', targetFieldId: 'tsku' },
        { sourceFieldId: 'name', targetFieldId: 'tname' },
        { sourceFieldId: 'price', targetFieldId: 'tprice' },
      ],
    },
    receiverFilter: { acceptMode: 'auto' },
    conflictResolution: null,
    links: new Map(),
    targetRows: new Map(),
    dedupIndex: new Map(),
    unmappedTarget: () => null,
    mapping: { targetType: () => 'text', rates: [], today: '2026-01-01', formula: () => null },
    toStored: (values) => values,
    localChangedAt: () => null,
    upstreamChangedAt: new Date('2026-01-01T00:00:00Z'),
    newRowId: () => `new-${++next}`,
    ...overrides,
  };
}

describe('planBinding', () => {
  it('creates, dedups, filters by scope and rejects by rule', () => {
    const plan = planBinding(
      input({
        changes: ['a', 'b', 'c', 'd', 'e'].map((rowId) => ({
          rowId,
          kind: 'created' as const,
          fieldIds: [],
        })),
        sourceRows: new Map([
          ['a', { sku: 'S1', name: 'A', price: 5 }],
          ['b', { sku: 'S2', name: 'B', price: 500 }],
          ['c', { sku: 'S3', name: 'C', price: 7 }],
          ['d', { sku: 'S1', name: 'D', price: 9 }],
          ['e', { sku: 'S9', name: 'E', price: 9 }],
        ]),
        shareScope: {
          type: 'filter',
          filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'lt', value: 100 }] },
        },
        receiverFilter: {
          acceptMode: 'selective',
          manualAcceptRules: {
            autoRejectIf: { conditions: [{ fieldId: 'sku', operator: 'eq', value: 'S3' }] },
            defaultAction: 'accept',
          },
          deduplicationStrategy: 'by_field',
          deduplicationFieldIds: ['tsku'],
        },
        dedupIndex: new Map([['["s9"]', 'existing-9']]),
        targetRows: new Map([
          ['existing-9', { exists: true, values: { tsku: 'S9', tname: 'E', tprice: 1 } }],
        ]),
      }),
    );
    expect(plan.logs.map((log) => [log.sourceRowId, log.outcome])).toEqual([
      ['a', 'accepted'],
      ['b', 'filtered'],
      ['c', 'rejected'],
      ['d', 'skipped'],
      ['e', 'accepted'],
    ]);
    expect(plan.changes.map((change) => [change.kind, change.targetRowId])).toEqual([
      ['create', 'new-1'],
      ['update', 'existing-9'],
    ]);
    expect(plan.changes[1]?.values).toEqual({ tprice: 9 });
    expect(plan.links.get('d')?.targetRowId).toBe('new-1');
  });

  it('resolves local edits per strategy (sync fields always follow upstream), deletes linked rows', () => {
    const base = input({
      changes: [
        { rowId: 'a', kind: 'updated', fieldIds: ['name', 'price', 'sku'] },
        { rowId: 'z', kind: 'deleted', fieldIds: [] },
      ],
      sourceRows: new Map([['a', { sku: 'S1-new', name: 'A2', price: 6 }]]),
      links: new Map([
        [
          'a',
          { targetRowId: 't1', lastValues: { tsku: 'S1', tname: 'A', tprice: 5 }, syncedAt: new Date(0) },
        ],
        ['z', { targetRowId: 't2', lastValues: {}, syncedAt: new Date(0) }],
      ]),
      targetRows: new Map([
        ['t1', { exists: true, values: { tsku: 'S1', tname: 'A-local', tprice: 4.5 } }],
        ['t2', { exists: true, values: {} }],
      ]),
      conflictResolution: { defaultStrategy: 'keep_local' },
    });
    const plan = planBinding(base);
    expect(plan.changes).toEqual([
      { kind: 'update', sourceRowId: 'a', targetRowId: 't1', values: { tsku: 'S1-new' }, decision: 'accept' },
      { kind: 'delete', sourceRowId: 'z', targetRowId: 't2', values: {}, decision: 'accept' },
    ]);
    expect(plan.logs.map((log) => log.outcome)).toEqual(['conflict', 'accepted']);
    expect(plan.links.get('z')).toBeNull();

    const upstream = planBinding({
      ...base,
      conflictResolution: {
        defaultStrategy: 'keep_local',
        fieldStrategies: { tprice: { strategy: 'keep_upstream' } },
      },
    });
    expect(upstream.changes[0]?.values).toEqual({ tsku: 'S1-new', tprice: 6 });
    const mirrored = planBinding({
      ...base,
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'tsku' },
          { sourceFieldId: 'name', targetFieldId: 'tname', propagationMode: 'sync' },
          { sourceFieldId: 'price', targetFieldId: 'tprice' },
        ],
      },
    });
    expect(mirrored.changes[0]?.values).toEqual({ tsku: 'S1-new', tname: 'A2' });

    const latest = planBinding({
      ...base,
      conflictResolution: { defaultStrategy: 'latest_wins' },
      localChangedAt: () => new Date('2026-02-01T00:00:00Z'),
    });
    expect(latest.changes[0]?.values).toEqual({ tsku: 'S1-new' });

    const onlyChanged = planBinding({
      ...base,
      eventTypes: ['field_value_changed'],
      changes: [{ rowId: 'a', kind: 'updated', fieldIds: ['sku'] }],
      conflictResolution: null,
    });
    expect(onlyChanged.changes[0]?.values).toEqual({ tsku: 'S1-new' });
    expect(onlyChanged.logs[0]?.eventType).toBe('field_value_changed');

    const noDeletes = planBinding({ ...base, eventTypes: ['row_updated'] });
    expect(noDeletes.logs[1]).toMatchObject({ outcome: 'filtered', eventType: 'row_deleted' });
  });

  it('withdraws a propagated row that leaves the share scope, when deletions propagate', () => {
    const base = input({
      changes: [
        { rowId: 'a', kind: 'updated', fieldIds: ['price'] },
        { rowId: 'b', kind: 'updated', fieldIds: ['price'] },
      ],
      sourceRows: new Map([
        ['a', { sku: 'S1', name: 'A', price: 500 }],
        ['b', { sku: 'S2', name: 'B', price: 700 }],
      ]),
      shareScope: {
        type: 'filter',
        filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'lt', value: 100 }] },
      },
      // Only `a` was propagated: `b` was never in scope.
      links: new Map([['a', { targetRowId: 't1', lastValues: { tsku: 'S1' }, syncedAt: new Date(0) }]]),
      targetRows: new Map([['t1', { exists: true, values: { tsku: 'S1' } }]]),
    });
    const plan = planBinding(base);
    expect(plan.changes).toEqual([
      { kind: 'delete', sourceRowId: 'a', targetRowId: 't1', values: {}, decision: 'accept' },
    ]);
    expect(plan.logs).toEqual([
      expect.objectContaining({
        sourceRowId: 'a',
        outcome: 'accepted',
        reason: 'deleted: left the connection share scope',
      }),
      expect.objectContaining({
        sourceRowId: 'b',
        outcome: 'filtered',
        reason: 'outside the connection share scope',
      }),
    ]);
    expect(plan.links.get('a')).toBeNull();

    const manual = planBinding({ ...base, receiverFilter: { acceptMode: 'manual' } });
    expect(manual.changes[0]?.decision).toBe('pending');
    expect(manual.logs[0]?.reason).toBe('deleted in a pending request: left the connection share scope');
    expect(manual.links.get('a')).toEqual({ targetRowId: 't1', lastValues: { tsku: 'S1' } });

    const keepsRows = planBinding({ ...base, eventTypes: ['row_created', 'row_updated'] });
    expect(keepsRows.changes).toEqual([]);
    expect(keepsRows.logs[0]).toMatchObject({
      outcome: 'filtered',
      reason: 'outside the connection share scope',
    });
  });

  it('logs a mapping failure as error and goes on', () => {
    const plan = planBinding(
      input({
        changes: [
          { rowId: 'a', kind: 'created', fieldIds: [] },
          { rowId: 'b', kind: 'created', fieldIds: [] },
        ],
        sourceRows: new Map([
          ['a', { sku: 'x' }],
          ['b', { sku: 'y' }],
        ]),
        fieldMapping: { rules: [{ sourceFieldId: 'sku', targetFieldId: 'tsku' }] },
        toStored: (values) => {
          if (values.tsku === 'x') {
            throw new Error('bad value');
          }
          return values;
        },
        receiverFilter: { acceptMode: 'manual' },
      }),
    );
    expect(plan.logs.map((log) => [log.outcome, log.reason])).toEqual([
      ['error', 'the mapped values do not fit the order book: bad value'],
      ['pending', 'created in a pending request'],
    ]);
  });
});

describe('planBinding with pending proposals', () => {
  it('treats neither an accepted nor a rejected proposal as a local edit', () => {
    const base = input({
      changes: [{ rowId: 'a', kind: 'updated', fieldIds: ['price'] }],
      sourceRows: new Map([['a', { sku: 'S1', name: 'A', price: 6 }]]),
      links: new Map([
        [
          'a',
          { targetRowId: 't1', lastValues: { tsku: 'S1', tname: 'A', tprice: 5 }, syncedAt: new Date(0) },
        ],
      ]),
      targetRows: new Map([['t1', { exists: true, values: { tsku: 'S1', tname: 'A', tprice: 5 } }]]),
      receiverFilter: { acceptMode: 'manual' },
      conflictResolution: { defaultStrategy: 'keep_local' },
    });
    const proposed = planBinding(base);
    expect(proposed.changes[0]).toMatchObject({ kind: 'update', values: { tprice: 6 }, decision: 'pending' });
    const link = proposed.links.get('a') as { targetRowId: string; lastValues: Record<string, unknown> };
    expect(link.lastValues).toMatchObject({ tprice: 6, $pending: { tprice: 5 } });

    const next = {
      ...base,
      sourceRows: new Map([['a', { sku: 'S1', name: 'A', price: 7 }]]),
      links: new Map([['a', { ...link, syncedAt: new Date(0) }]]),
    };
    // Rejected: the row still holds 5.
    expect(planBinding(next).changes[0]).toMatchObject({ values: { tprice: 7 }, decision: 'pending' });
    // Accepted: the row holds 6.
    const accepted = planBinding({
      ...next,
      targetRows: new Map([['t1', { exists: true, values: { tsku: 'S1', tname: 'A', tprice: 6 } }]]),
    });
    expect(accepted.changes[0]).toMatchObject({ values: { tprice: 7 } });
    // A real local edit (neither 5 nor 6) is kept under keep_local.
    const edited = planBinding({
      ...next,
      targetRows: new Map([['t1', { exists: true, values: { tsku: 'S1', tname: 'A', tprice: 99 } }]]),
    });
    expect(edited.changes).toHaveLength(0);
    expect(edited.logs[0]?.outcome).toBe('conflict');
  });
});
