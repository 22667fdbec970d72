import { applyPropertiesEffect, foldChanges } from './change-fold.js';
import type { ChangeDraft } from './document.records.js';

const create = (rowId: string, values: Record<string, string | number | null>, bulkId?: string): ChangeDraft => ({
  type: 'row-create',
  operation: 'create',
  targetId: rowId,
  data: bulkId ? { values, origin: { bulkId } } : { values },
});
const update = (rowId: string, values: Record<string, string | number | null>, baseVersion: number | null = 1): ChangeDraft => ({
  type: 'row-update',
  operation: 'update',
  targetId: rowId,
  data: { values, baseVersion },
});
const remove = (rowId: string, baseVersion: number | null = 1): ChangeDraft => ({ type: 'row-delete', operation: 'delete', targetId: rowId, data: { baseVersion } });

describe('foldChanges', () => {
  it('folds create + update into one create without cleared values', () => {
    const folded = foldChanges([create('a', { x: 1, y: 2 }), update('a', { y: null, z: 3 }, null)]);
    expect(folded.rows.get('a')).toEqual({ kind: 'create', rowId: 'a', values: { x: 1, z: 3 }, baseVersion: null, origins: ['single'] });
  });

  it('drops a row created and deleted in the same request', () => {
    expect(foldChanges([create('a', { x: 1 }), remove('a', null)]).rows.size).toBe(0);
  });

  it('keeps the first base version across updates and a final delete', () => {
    const folded = foldChanges([update('a', { x: 1 }, 4), update('a', { y: 2 }, 5), remove('a', 5)]);
    expect(folded.rows.get('a')).toMatchObject({ kind: 'delete', baseVersion: 4 });
  });

  it('moves the base version to the one a re-basing change names, keeping the earlier values', () => {
    const rebase = (change: ChangeDraft): ChangeDraft => ({ ...change, data: { ...change.data, rebase: true } }) as ChangeDraft;
    const updated = foldChanges([update('a', { x: 1, y: 1 }, 1), update('a', { y: 2 }, 4), rebase(update('a', { x: 3 }, 4))]);
    expect(updated.rows.get('a')).toMatchObject({ kind: 'update', set: { x: 3, y: 2 }, baseVersion: 4 });
    const replaced = foldChanges([remove('a', 1), create('a', { x: 1 }), rebase(update('a', { y: 2 }, 3))]);
    expect(replaced.rows.get('a')).toMatchObject({ kind: 'replace', values: { x: 1, y: 2 }, baseVersion: 3 });
    expect(foldChanges([remove('a', 1), rebase(remove('a', 2))]).rows.get('a')).toMatchObject({ kind: 'delete', baseVersion: 2 });
    expect(foldChanges([update('a', { x: 1 }, 1), rebase(remove('a', 2))]).rows.get('a')).toMatchObject({ kind: 'delete', baseVersion: 2 });
    // A created row has no base to move.
    expect(foldChanges([create('a', { x: 1 }), rebase(update('a', { x: 2 }, 5))]).rows.get('a')).toMatchObject({ kind: 'create', baseVersion: null });
  });

  it('merges updates, later values winning, null meaning clear', () => {
    const folded = foldChanges([update('a', { x: 1, y: 1 }), update('a', { x: 2, y: null })]);
    expect(folded.rows.get('a')).toMatchObject({ kind: 'update', set: { x: 2, y: null }, baseVersion: 1 });
  });

  it('turns delete + create into a replace of the existing row', () => {
    const folded = foldChanges([remove('a', 3), create('a', { x: 9 })]);
    expect(folded.rows.get('a')).toMatchObject({ kind: 'replace', values: { x: 9 }, baseVersion: 3 });
  });

  it('remembers bulk origins', () => {
    expect(foldChanges([create('a', { x: 1 }, 'bulk-1')]).rows.get('a')?.origins).toEqual(['bulk-1']);
  });

  it('folds properties: patches merge, replace resets, delete clears', () => {
    const folded = foldChanges([
      { type: 'property-update', operation: 'update', targetId: 'properties', data: { values: { a: 1 }, replace: false, baseVersion: 2 } },
      { type: 'property-update', operation: 'update', targetId: 'properties', data: { values: { b: 2 }, replace: false, baseVersion: 3 } },
    ]);
    expect(folded.properties).toMatchObject({ set: { a: 1, b: 2 }, replace: false, baseVersion: 2 });
    expect(applyPropertiesEffect({ a: 0, c: 3 }, folded.properties!)).toEqual({ a: 1, b: 2, c: 3 });
    const cleared = foldChanges([{ type: 'property-delete', operation: 'delete', targetId: 'properties', data: { baseVersion: 1 } }]);
    expect(applyPropertiesEffect({ a: 1 }, cleared.properties!)).toEqual({});
  });

  it('keeps the last metadata and the first base metadata version', () => {
    const folded = foldChanges([
      { type: 'metadata-update', operation: 'update', targetId: 'metadata', data: { fields: [], properties: [], baseMetadataVersion: 1 } },
      { type: 'metadata-update', operation: 'update', targetId: 'metadata', data: { fields: [{ id: 'x', name: 'X', type: 'text' }], properties: [], baseMetadataVersion: 1 } },
    ]);
    expect(folded.metadata).toEqual({ fields: [{ id: 'x', name: 'X', type: 'text' }], properties: [], baseMetadataVersion: 1 });
  });

  it('collects relation-create changes in order, with the change target as the edge id', () => {
    const target = { documentUuid: 'd2', docType: 'suppliers', docId: 's', workspaceId: null, rowId: 's1' };
    const relation = (id: string, sourceRowId: string): ChangeDraft => ({
      type: 'relation-create',
      operation: 'create',
      targetId: id,
      data: { type: 'supplied-by', direction: 'outgoing', sourceRowId, target, metadata: {} },
    });
    const folded = foldChanges([relation('e1', 'a'), create('b', { x: 1 }), relation('e2', 'b')]);
    expect(folded.relations.map((item) => [item.id, item.data.sourceRowId])).toEqual([
      ['e1', 'a'],
      ['e2', 'b'],
    ]);
    expect(folded.rows.get('b')?.kind).toBe('create');
  });

  it("keeps a revert's property expectations until a later change of the property decides it", () => {
    const props = (values: Record<string, string | null>, expected?: Record<string, string | null>): ChangeDraft => ({
      type: 'property-update',
      operation: 'update',
      targetId: 'properties',
      data: { values, replace: false, baseVersion: 3, ...(expected ? { expected } : {}) },
    });
    expect(foldChanges([props({ a: '1', b: '1' }, { a: '2', b: '2' })]).properties?.expected).toEqual({ a: '2', b: '2' });
    expect(foldChanges([props({ a: '1', b: '1' }, { a: '2', b: '2' }), props({ a: 'x' })]).properties?.expected).toEqual({ b: '2' });
    expect(foldChanges([props({ a: '1' }, { a: '2' }), props({ a: 'x' })]).properties?.expected).toBeUndefined();
  });

  it("keeps a revert's settings entries until a later settings change replaces them", () => {
    const revert = [{ path: ['notifications', 'onMerge'], expected: true }];
    const settings = (data: ChangeDraft['data']): ChangeDraft => ({ type: 'settings-update', operation: 'update', targetId: 'settings', data }) as ChangeDraft;
    expect(foldChanges([settings({ settings: {}, revert })]).settingsRevert).toEqual(revert);
    expect(foldChanges([settings({ settings: {}, revert }), settings({ settings: { notifications: {} } })]).settingsRevert).toBeUndefined();
  });
});
