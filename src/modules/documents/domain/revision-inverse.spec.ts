import type { OperationRecord } from './document.records.js';
import { inverseOf } from './revision-inverse.js';

let ordinal = 0;
function op(partial: Pick<OperationRecord, 'type' | 'target' | 'oldValue' | 'newValue'>): OperationRecord {
  ordinal += 1;
  return { id: `o${ordinal}`, revisionId: 'rev', ordinal, operator: 'u', timestamp: new Date(0), note: null, ...partial };
}

const ctx = {
  documentUuid: 'doc',
  metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: [] },
  metadataVersion: 4,
  propertiesVersion: 2,
  settings: { workflow: { requiresApproval: true }, notifications: { onMerge: true } },
  existingRowIds: new Set(['a']),
};

describe('inverseOf', () => {
  it('inverts row operations with the versions the revision left as bases', () => {
    const { drafts } = inverseOf(
      [
        op({ type: 'row-create', target: { kind: 'row', rowId: 'n' }, oldValue: null, newValue: { values: { name: 'N' }, version: 1 } }),
        op({ type: 'row-update', target: { kind: 'row', rowId: 'a' }, oldValue: { values: { name: 'old' }, version: 3 }, newValue: { values: { name: 'new' }, version: 4 } }),
        op({ type: 'row-delete', target: { kind: 'row', rowId: 'd' }, oldValue: { values: { name: 'D' }, version: 7 }, newValue: null }),
      ],
      ctx as never,
    );
    expect(drafts).toEqual([
      { type: 'row-create', operation: 'create', targetId: 'd', data: { values: { name: 'D' } } },
      { type: 'row-update', operation: 'update', targetId: 'a', data: { values: { name: 'old' }, baseVersion: 4 } },
      { type: 'row-delete', operation: 'delete', targetId: 'n', data: { baseVersion: 1 } },
    ]);
  });

  it('brings back a deleted field with its values for rows that still exist, and removes a created one', () => {
    const { drafts } = inverseOf(
      [
        op({ type: 'field-create', target: { kind: 'field', fieldId: 'name' }, oldValue: null, newValue: { field: { id: 'name' } } }),
        op({
          type: 'field-delete',
          target: { kind: 'field', fieldId: 'note' },
          oldValue: { field: { id: 'note', name: 'Note', type: 'text' }, values: { a: 'kept', gone: 'lost' } },
          newValue: null,
        }),
      ],
      ctx as never,
    );
    expect(drafts[0]).toEqual({
      type: 'metadata-update',
      operation: 'update',
      targetId: 'metadata',
      data: { fields: [{ id: 'note', name: 'Note', type: 'text' }], properties: [], baseMetadataVersion: 4 },
    });
    expect(drafts[1]).toEqual({ type: 'row-update', operation: 'update', targetId: 'a', data: { values: { note: 'kept' }, baseVersion: null } });
    expect(drafts).toHaveLength(2);
  });

  it('leaves the values of computed fields out of restored rows and fields: the merge computes them again', () => {
    const computed = {
      ...ctx,
      metadata: {
        fields: [
          { id: 'name', name: 'Name', type: 'text' },
          { id: 'price', name: 'Price', type: 'number' },
          { id: 'total', name: 'Total', type: 'formula', formula: 'price * 2' },
        ],
        properties: [],
      },
    };
    const { drafts } = inverseOf(
      [
        op({ type: 'row-delete', target: { kind: 'row', rowId: 'd' }, oldValue: { values: { name: 'D', price: 2, total: 4, n: 7 }, version: 3 }, newValue: null }),
        op({
          type: 'field-delete',
          target: { kind: 'field', fieldId: 'n' },
          oldValue: { field: { id: 'n', name: 'No.', type: 'auto_number' }, values: { a: 1 } },
          newValue: null,
        }),
      ],
      computed as never,
    );
    expect(drafts.map((draft) => [draft.type, draft.targetId])).toEqual([
      ['metadata-update', 'metadata'],
      ['row-create', 'd'],
    ]);
    expect(drafts[1]).toMatchObject({ data: { values: { name: 'D', price: 2 } } });
  });

  it('restores properties and settings, re-creates free-standing edges and reports what has no inverse', () => {
    const { drafts, skipped } = inverseOf(
      [
        op({ type: 'settings-update', target: { kind: 'settings' }, oldValue: { workflow: { requiresApproval: false } }, newValue: {} }),
        op({ type: 'property-update', target: { kind: 'property', fieldId: 'p' }, oldValue: { value: 1 }, newValue: { value: 2 } }),
        op({
          type: 'relation-delete',
          target: { kind: 'relation', rowId: 'a' },
          oldValue: { id: 'e1', type: 'link', direction: 'outgoing', fieldId: null, source: { documentUuid: 'doc', rowId: 'a' }, target: { documentUuid: 'other', rowId: 'x' }, metadata: {} },
          newValue: null,
        }),
        op({ type: 'relation-create', target: { kind: 'relation', rowId: 'a' }, oldValue: null, newValue: { id: 'e2', source: { documentUuid: 'doc', rowId: 'a' } } }),
        op({ type: 'relation-create', target: { kind: 'relation', rowId: 'z' }, oldValue: null, newValue: { id: 'e3', source: { documentUuid: 'other', rowId: 'z' } } }),
      ],
      ctx as never,
    );
    expect(drafts.map((draft) => draft.type)).toEqual(['settings-update', 'property-update', 'relation-delete', 'relation-create']);
    // Only the settings entry the revision changed, on today's settings; the property expected as the revision left it.
    expect(drafts[0]?.data).toEqual({
      settings: { workflow: { requiresApproval: false }, notifications: { onMerge: true } },
      revert: [{ path: ['workflow', 'requiresApproval'], restore: false, expected: undefined }],
    });
    expect(drafts[1]?.data).toEqual({ values: { p: 1 }, replace: false, baseVersion: 2, expected: { p: 2 } });
    expect(drafts[3]).toMatchObject({ targetId: 'e1', data: { type: 'link', sourceRowId: 'a', target: { documentUuid: 'other', rowId: 'x' } } });
    // A free-standing edge created is removed by id (operations are undone newest first); one starting in another
    // document is not this revert's.
    expect(drafts[2]).toEqual({ type: 'relation-delete', operation: 'delete', targetId: 'e2', data: { sourceRowId: 'a' } });
    expect(skipped).toEqual([expect.objectContaining({ type: 'relation-create', reason: 'the edge belongs to another document' })]);
  });

  it('gives back a relation field reference a row deletion recorded; lists what another document or an unrecorded value held', () => {
    const fieldEdge = (id: string, source: { documentUuid: string; docType: string; docId: string; rowId: string }) => ({
      id,
      type: 'rel',
      direction: 'outgoing',
      fieldId: 'rel',
      source,
      target: { documentUuid: 'doc', docType: 't', docId: 'd', rowId: 'b' },
      metadata: {},
    });
    const { drafts, skipped } = inverseOf(
      [
        op({ type: 'row-delete', target: { kind: 'row', rowId: 'b' }, oldValue: { values: { name: 'B' }, version: 2 }, newValue: null }),
        op({ type: 'relation-delete', target: { kind: 'relation', rowId: 'b', fieldId: 'rel' }, oldValue: fieldEdge('e1', { documentUuid: 'doc', docType: 't', docId: 'd', rowId: 'a' }), newValue: null }),
        op({ type: 'relation-delete', target: { kind: 'relation', rowId: 'b', fieldId: 'rel' }, oldValue: fieldEdge('e2', { documentUuid: 'other', docType: 'o', docId: 'x', rowId: 'o1' }), newValue: null }),
        op({ type: 'relation-delete', target: { kind: 'relation', rowId: 'b', fieldId: 'rel' }, oldValue: fieldEdge('e3', { documentUuid: 'doc', docType: 't', docId: 'd', rowId: 'c' }), newValue: null }),
        op({ type: 'row-update', target: { kind: 'row', rowId: 'a' }, oldValue: { values: { rel: [{ rowId: 'b' }] }, version: 1 }, newValue: { values: { rel: null }, version: 2 } }),
      ],
      ctx as never,
    );
    expect(drafts).toEqual([
      { type: 'row-update', operation: 'update', targetId: 'a', data: { values: { rel: [{ rowId: 'b' }] }, baseVersion: 2 } },
      { type: 'row-create', operation: 'create', targetId: 'b', data: { values: { name: 'B' } } },
    ]);
    expect(skipped).toEqual([
      { ordinal: expect.any(Number), type: 'relation-delete', reason: 'the revision did not record the value of field rel of row c that held the reference' },
      { ordinal: expect.any(Number), type: 'relation-delete', reason: 'the reference was held by row o1 of o/x: that document recorded its removal in a revision of its own' },
    ]);
  });
});
