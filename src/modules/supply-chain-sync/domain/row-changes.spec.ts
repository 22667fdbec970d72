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
});
