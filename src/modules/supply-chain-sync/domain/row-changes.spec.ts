import { foldRowChanges } from './row-changes.js';

describe('foldRowChanges', () => {
  it('folds several revisions into one change per row', () => {
    const folded = foldRowChanges([
      [
        { rowId: 'a', kind: 'created', fieldIds: [] },
        { rowId: 'b', kind: 'updated', fieldIds: ['x'] },
        { rowId: 'c', kind: 'created', fieldIds: [] },
        { rowId: 'd', kind: 'updated', fieldIds: ['x'] },
      ],
      [
        { rowId: 'a', kind: 'updated', fieldIds: ['y'] },
        { rowId: 'b', kind: 'updated', fieldIds: ['y'] },
        { rowId: 'c', kind: 'deleted', fieldIds: [] },
        { rowId: 'd', kind: 'deleted', fieldIds: [] },
      ],
    ]);
    expect(folded).toEqual([
      { rowId: 'a', kind: 'created', fieldIds: [] },
      { rowId: 'b', kind: 'updated', fieldIds: ['x', 'y'] },
      { rowId: 'd', kind: 'deleted', fieldIds: [] },
    ]);
  });

  it('folds a row deleted and created again into a create (planned whole, not an update of no fields)', () => {
    expect(
      foldRowChanges([
        [{ rowId: 'a', kind: 'updated', fieldIds: ['x'] }],
        [{ rowId: 'a', kind: 'deleted', fieldIds: [], oldValues: { x: 1 } }],
        [{ rowId: 'a', kind: 'created', fieldIds: [] }],
      ]),
    ).toEqual([{ rowId: 'a', kind: 'created', fieldIds: [], recreated: true, oldValues: { x: 1 } }]);
  });
  it("keeps, per field, the time of the revision that last changed it (latest_wins compares fields, not rows)", () => {
    const t1 = new Date('2026-01-01T00:00:01Z');
    const t2 = new Date('2026-01-01T00:00:02Z');
    const folded = foldRowChanges([
      [
        { rowId: 'a', kind: 'updated', fieldIds: ['price'], changedAt: t1 },
        { rowId: 'b', kind: 'created', fieldIds: [], changedAt: t1 },
      ],
      [
        { rowId: 'a', kind: 'updated', fieldIds: ['sku'], changedAt: t2 },
        { rowId: 'b', kind: 'updated', fieldIds: ['sku'], changedAt: t2 },
      ],
    ]);
    expect(folded).toEqual([
      { rowId: 'a', kind: 'updated', fieldIds: ['price', 'sku'], changedAt: t2, fieldChangedAt: { price: t1, sku: t2 } },
      { rowId: 'b', kind: 'created', fieldIds: [], changedAt: t2, createdAt: t1, fieldChangedAt: { sku: t2 } },
    ]);
  });
});
